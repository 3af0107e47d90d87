"""Writing the viewer's own read models (its first pages, its usage scans) beside the log: one row at a time,
current to a log position, as the run and episode summaries are (docs/design/summaries.md)."""

from __future__ import annotations

from p2w_runtime.store import EventStore, ReadOnlyStore, Summary


async def write_row(store: EventStore, model: str, row: Summary, end: int) -> None:
    """Each row names the log end it is current to, so the model's mark only has to move forward; a writer that
    lost the mark to another writes nothing (the next open writes again), a read-only store nothing at all."""
    try:
        mark = await store.summary_mark(model)
        if mark is not None:
            await store.write_summaries(model, [row], since=mark, until=max(mark, end))
    except ReadOnlyStore:
        pass
