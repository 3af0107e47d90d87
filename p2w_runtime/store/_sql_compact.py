"""Compaction: a finished episode's rows become segments, so a store filled by ``record`` is as small as an imported
one (docs/design/store.md, "Compaction").

One write transaction per call reads each stream's rows, checks their chain (a changed row is left for ``verify``
to name, never folded into a segment), inserts the segments and deletes the rows: a crash at any point leaves
either the rows or the segments, never both or neither. The events keep their positions, seqs and hashes, which
their segments (``SPARSE_CODEC``) record, since other streams' events may come between them (``_sql_sparse.py``
reads those in position order). The database's triggers refuse the deletion of any event row no segment holds.
Its segments are compressed with the store's dictionary (``_sql_dictionary.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from p2w_rt.schemas import StoredEvent
from p2w_runtime.store import _core as core
from p2w_runtime.store._rows import row_to_event
from p2w_runtime.store._segments import compacted_row, compaction_cuts
from p2w_runtime.store._sql_base import Session, fixed
from p2w_runtime.store._sql_dictionary import SqlDictionary
from p2w_runtime.store._sqlalchemy import sa

if TYPE_CHECKING:
    from sqlalchemy import ClauseElement


@fixed
def _stream_rows() -> ClauseElement:
    e = core.EVENTS.c
    return sa.select(*core.EVENT_COLUMNS).where(e.stream == sa.bindparam("stream")).order_by(e.seq)


@fixed
def _delete_rows() -> ClauseElement:
    e = core.EVENTS.c
    return sa.delete(core.EVENTS).where(
        e.stream == sa.bindparam("stream"), e.seq >= sa.bindparam("first_seq"), e.seq <= sa.bindparam("last_seq")
    )


def chain_intact(events: Sequence[StoredEvent]) -> bool:
    """Whether consecutive ``events`` of one stream link and each hash is what its content gives."""
    prev = events[0].prev_hash
    for event in events:
        if event.prev_hash != prev or not event.hash_matches():
            return False
        prev = event.hash
    return True


class SqlCompaction(SqlDictionary):
    """``compact`` for every SQL backend. A PostgreSQL writer that trusts its kept end of the log learns that the
    log moved by colliding with a row, which compaction may have deleted: a trigger there makes rows at or before a
    segment's last position collide instead (``postgres.py``)."""

    async def compact(self, streams: Sequence[str]) -> int:
        if not (self.has_segments and streams):
            return 0
        moved = 0
        async with self._writing() as session:
            dictionary = await self._segment_dictionary(session)
            for stream in dict.fromkeys(streams):
                moved += await self._compact_stream(session, stream, dictionary)
        return moved

    async def _compact_stream(self, session: Session, stream: str, dictionary: str | None) -> int:
        rows, delete = self._statement("stream_rows"), self._statement("delete_rows")
        events = [row_to_event(row) for row in await session.fetch(rows.sql, rows.params(stream=stream))]
        cuts = [(start, end) for start, end in compaction_cuts(events) if chain_intact(events[start:end])]
        if not cuts:
            return 0
        segments = [compacted_row(events[start:end], dictionary) for start, end in cuts]
        await session.execute_many(self._insert_segments, segments)
        for start, end in cuts:
            first_seq, last_seq = events[start].seq, events[end - 1].seq
            await session.fetch(delete.sql, delete.params(stream=stream, first_seq=first_seq, last_seq=last_seq))
        return sum(end - start for start, end in cuts)
