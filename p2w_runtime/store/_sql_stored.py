"""Which events a SQL store already holds, by id: in rows (each with its hash), and, of imported events, in segments
at their seq. An import compares their hashes with its own; an append refuses an id stored already."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from p2w_rt.schemas import StoredEvent
from p2w_runtime.store import _core as core
from p2w_runtime.store._log_end import Heads
from p2w_runtime.store._segments import segment_events
from p2w_runtime.store._sql_base import ID_CHUNK, Session, chunk_values, fixed, in_chunk
from p2w_runtime.store._sql_dictionary import SqlDictionary
from p2w_runtime.store._sqlalchemy import sa

if TYPE_CHECKING:
    from sqlalchemy.sql import ClauseElement

_SEGMENT_ARGS = ("stream", "first_seq", "last_seq", "first_position", "prev_hash", "head_hash", "codec", "data")
"""The segments columns ``segment_events`` takes, in its order."""


@fixed
def _stored_hashes() -> ClauseElement:
    e = core.EVENTS.c
    return sa.select(e.event_id, e.hash).where(e.event_id.in_(in_chunk()))


class SqlStored(SqlDictionary):
    """The lookups of stored events an append and an import make."""

    async def _stored_hashes(self, session: Session, event_ids: list[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        stored = self._statement("stored_hashes")
        for i in range(0, len(event_ids), ID_CHUNK):
            found.update(await session.fetch(stored.sql, stored.params(**chunk_values(event_ids[i : i + ID_CHUNK]))))
        return found

    async def _segment_hashes(
        self, session: Session, heads: Heads[Session], events: Sequence[StoredEvent]
    ) -> dict[str, str]:
        """Of imported ``events`` not found in rows, those stored in segments, with their stored hash: an event at or
        below its stream's head whose stored event at that seq has its id."""
        wanted: dict[str, dict[int, str]] = {}
        for event in events:
            if event.seq <= (await heads.get(session, event.stream))[0]:
                wanted.setdefault(event.stream, {})[event.seq] = event.event_id
        found: dict[str, str] = {}
        s = core.SEGMENTS.c
        columns = [s[name] for name in _SEGMENT_ARGS]
        for stream, seqs in wanted.items():
            query = sa.select(*columns).where(s.stream == stream, s.last_seq >= min(seqs), s.first_seq <= max(seqs))
            rows = await self._fetch_once(session, query)
            await self._load_dictionaries([row[_SEGMENT_ARGS.index("codec")] for row in rows])
            for row in rows:
                for stored in segment_events(*row):
                    if seqs.get(stored.seq) == stored.event_id:
                        found[stored.event_id] = stored.hash
        return found
