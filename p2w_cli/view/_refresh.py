"""Whoever appended to a run brings the run's first page up to date as its store closes, so the next fresh viewer's
first open of the run reads that one stored row rather than the whole run (docs/design/view.md, "The first open after
a command" and "Kept by every writer").

A stored first page (``_first_page.py``) goes stale with any event of its run's tree, and the open that finds it so
rebuilds it from the whole run, paid by whoever opens the viewer next. The writer (a judging or classification pass,
an import of labels or of a run, a recording; a command or a script) has the store open and the run's new events
just behind it, so it pays that instead, once, after its own work: ``open_store`` calls ``refresh_first_pages``, the
read model this package installs under ``p2w_rt.read_models`` (``p2w_runtime/store/_read_models.py``). In a store
where a viewer has stored a page, that is every finished run the writer appended to: the viewer's landing page
stores the first page of every run it lists anyway. A store where no viewer has loads nothing of this module.
"""

from __future__ import annotations

from collections.abc import Callable

from p2w_cli.view._kept_rows import FIRST_PAGE
from p2w_runtime.store import EventStore, tree_root

REFRESH_LIMIT = 100_000
"""Events appended beyond which their runs' pages are left to the viewer's next open: reading them back to find
their runs would cost what rebuilding does (an import of whole runs, not a pass over one)."""


async def refresh_first_pages(
    store: EventStore, since: int, end: int, say: Callable[[str], None] | None = None
) -> list[str]:
    """Bring the first page of each finished run an event in (``since``, ``end``] belongs to up to the log's end,
    telling ``say`` of each run before its page is built: the ids of those runs (none when no viewer stored a page
    here or too much was appended)."""
    if not await store.summary_mark(FIRST_PAGE):  # 0: no page stored yet; None: this store cannot keep one
        return []
    if not since < end <= since + REFRESH_LIMIT:
        return []
    runs = [root for root in sorted(await _trees_appended_to(store, since, end)) if await _is_run(store, root)]
    if not runs:
        return []
    from p2w_cli.view._run_pages import rebuild_first_pages  # the page model and the run's reads: only now

    return await rebuild_first_pages(store, runs, say)


async def _trees_appended_to(store: EventStore, since: int, end: int) -> set[str]:
    """The roots of the stream trees with an event in (``since``, ``end``]: a run's page is kept under its root."""
    roots = set()
    events = store.read_all(after_position=since)
    try:
        async for event in events:
            if (event.position or 0) > end:
                break
            roots.add(tree_root(event.stream))
    finally:
        await events.aclose()  # type: ignore[attr-defined]  # an async generator behind EventStore's AsyncIterator
    return roots


async def _is_run(store: EventStore, root: str) -> bool:
    """Whether the tree is a run's (its root stream opens with ``run.started``), not a verify mark's or another's:
    one read by index, so a command that appended to no run imports nothing more."""
    first = await store.read_event(root, 1)
    return first is not None and first.type == "run.started"
