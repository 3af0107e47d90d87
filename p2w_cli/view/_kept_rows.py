"""Writing the viewer's own read models (its first pages, its usage scans) beside the log: one row at a time,
current to a log position, as the run and episode summaries are (docs/design/summaries.md)."""

from __future__ import annotations

from p2w_runtime.store import EventStore, ReadOnlyStore, Summary

FIRST_PAGE = "view.first-page.v3"
"""The first pages' read model (``_first_page.py``), its name and its rows' kind: a change of what a row holds takes
a new name (old rows are ignored). Named here, where it costs no import, for ``_refresh.py``'s check."""


async def write_row(store: EventStore, model: str, row: Summary, end: int) -> None:
    """Each row names the log end it is current to, so the model's mark only has to move forward; a writer that
    lost the mark to another writes nothing (the next open writes again), nor one whose row another process has
    already stored at a later end (two commands refreshing one page), a read-only store nothing at all."""
    try:
        mark = await store.summary_mark(model)
        if mark is not None and not await _stored_later(store, row):
            await store.write_summaries(model, [row], since=mark, until=max(mark, end))
    except ReadOnlyStore:
        pass


async def _stored_later(store: EventStore, row: Summary) -> bool:
    """Whether ``row`` is kept already at a later end that the log has reached (one past it is not to be trusted).
    Read by group, a statement compiled ahead (by key, SQLAlchemy would be imported to build it)."""
    kept = await store.read_summaries(row.kind, group=row.group)
    later = [other.ordinal for other in kept if other.key == row.key and other.ordinal > row.ordinal]
    return bool(later) and min(later) <= await store.log_end()
