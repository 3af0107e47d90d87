"""Moving a whole store to another (SQLite to PostgreSQL, or back), every hash chain checked on both sides.

The source is verified first, so a tampered source writes nothing. Events are copied in position order with
``append_stored``, which keeps each event's seq and hashes and refuses any that does not continue its
stream's chain; an event already in the target with the same hash is skipped, so an interrupted migration
is resumed by running it again. At the end the target is verified and every stream's head compared. The source's
verify marks stay behind: they name the source's positions, which the target's are not (``_verified_mark.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from p2w_rt.schemas import StoredEvent
from p2w_runtime.store._event_store import EventStore, StoreError
from p2w_runtime.store._verified_mark import MARK_STREAM
from p2w_runtime.store._verify import verify_store

BATCH = 1000
"""Events per target transaction: bounds memory (their blobs travel with them) and the work lost to a kill."""


@dataclass(frozen=True, slots=True)
class MigrateSummary:
    events: int
    copied: int
    """Events written now; ``events - copied`` were already in the target (a resumed migration)."""
    blobs: int
    streams: int


async def migrate_store(
    source: EventStore, target: EventStore, *, progress: Callable[[str, int, int], None] | None = None
) -> MigrateSummary:
    """Copy every event and blob of ``source`` into ``target``; ``StoreError`` if either side fails to verify."""
    before = await verify_store(source)
    if not before.ok:
        raise StoreError(f"{source.label}: does not verify, nothing migrated ({before.problems[0]})")
    total = await _events_to_move(source)
    copied = done = 0
    moved: set[str] = set()
    batch: list[StoredEvent] = []

    async def flush() -> None:
        nonlocal copied, done
        wanted = {sha for event in batch for sha in event.blobs} - moved
        blobs = {sha: await source.get_blob(sha) for sha in sorted(wanted)}
        copied += await target.append_stored(batch, blobs)
        moved.update(blobs)
        done += len(batch)
        batch.clear()
        if progress is not None:
            progress("events", done, total)

    async for event in source.read_all():
        if event.stream == MARK_STREAM:
            continue
        batch.append(event)
        if len(batch) >= BATCH:
            await flush()
    if batch:
        await flush()
    stray = {sha async for sha in source.blob_hashes()} - moved  # blobs no event references: kept all the same
    if stray:
        await target.append_stored([], {sha: await source.get_blob(sha) for sha in sorted(stray)})
    after = await verify_store(target)
    if not after.ok:
        raise StoreError(f"{target.label}: does not verify after the migration ({after.problems[0]})")
    theirs = {head.stream: head for head in await target.list_streams()}
    ours = [head for head in await source.list_streams() if head.stream != MARK_STREAM]
    for head in ours:
        if theirs.get(head.stream) != head:
            raise StoreError(f"{target.label}: stream {head.stream} does not end where it ends in {source.label}")
    return MigrateSummary(events=done, copied=copied, blobs=len(moved | stray), streams=len(ours))


async def _events_to_move(source: EventStore) -> int:
    """The events a migration goes through: every event but the verify marks, which stay behind, so that its progress
    ends at its total."""
    events, _ = await source.count()
    marks = await source.stream_head(MARK_STREAM)
    return events - (0 if marks is None else marks.last_seq)
