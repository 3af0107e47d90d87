"""Compaction: a finished episode's rows become segments, so a store filled by ``record`` is as small as an imported
one (docs/design/store.md, "Compaction").

One write transaction per call reads each stream's rows, checks their chain (a changed row is left for ``verify``
to name, never folded into a segment), inserts the segments and deletes the rows: a crash at any point leaves
either the rows or the segments, never both or neither. The events keep their positions, seqs and hashes, which
their segments (``SPARSE_CODEC``) record, since other streams' events may come between them (``_sql_sparse.py``
reads those in position order). The database's triggers refuse the deletion of any event row no segment holds.
Once a store holds ``TRAIN_AFTER`` compacted segments, a dictionary is trained on them and compresses the next
ones (``_dictionaries.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import zstandard

from p2w_rt.schemas import StoredEvent
from p2w_runtime.store import _core as core
from p2w_runtime.store._core import OnFirstUse
from p2w_runtime.store._dictionaries import TRAIN_AFTER, dictionary_of, is_loaded, load, train
from p2w_runtime.store._rows import compress_blobs, decompress_blob, row_to_event
from p2w_runtime.store._segments import (
    COMPACTED_LIKE,
    COMPACTED_SQL,
    SPARSE_CODEC,
    compacted_row,
    compacted_text,
    compaction_cuts,
)
from p2w_runtime.store._sql_base import Session, SqlStoreBase, fixed

if TYPE_CHECKING:
    import sqlalchemy as sa
    from sqlalchemy import ClauseElement
else:
    sa = OnFirstUse("sqlalchemy")


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


@fixed
def _latest_dictionary() -> ClauseElement:
    s = core.SEGMENTS.c
    named = s.codec.like(f"{COMPACTED_LIKE}+dict:%")
    compacted = sa.text(COMPACTED_SQL)  # as the partial index states it
    return sa.select(s.codec).where(compacted, named).order_by(s.first_position.desc()).limit(1)


@fixed
def _untrained_segments() -> ClauseElement:
    s = core.SEGMENTS.c
    untrained = (sa.text(COMPACTED_SQL), s.codec == SPARSE_CODEC)  # the first, as the partial index states it
    return sa.select(s.data).where(*untrained).order_by(s.first_position).limit(4 * TRAIN_AFTER)


def chain_intact(events: Sequence[StoredEvent]) -> bool:
    """Whether consecutive ``events`` of one stream link and each hash is what its content gives."""
    prev = events[0].prev_hash
    for event in events:
        if event.prev_hash != prev or event.compute_hash() != event.hash:
            return False
        prev = event.hash
    return True


class SqlCompaction(SqlStoreBase):
    """``compact`` for every SQL backend. A PostgreSQL writer that trusts its kept end of the log learns that the
    log moved by colliding with a row, which compaction may have deleted: a trigger there makes rows at or before a
    segment's last position collide instead (``postgres.py``)."""

    _dictionary: str | None = None
    """The hash of the dictionary this store's compactions use, once one is committed."""

    async def compact(self, streams: Sequence[str]) -> int:
        if not (self.has_segments and streams):
            return 0
        moved = 0
        async with self._writing() as session:
            dictionary = self._dictionary or await self._find_or_train(session)
            for stream in dict.fromkeys(streams):
                moved += await self._compact_stream(session, stream, dictionary)
        self._dictionary = dictionary
        return moved

    async def _find_or_train(self, session: Session) -> str | None:
        """The dictionary the store's compactions use (loaded), trained now if the store holds enough compacted
        segments without one; None until then."""
        latest = self._statement("latest_dictionary")
        for (codec,) in await session.fetch(latest.sql, latest.params()):
            sha = dictionary_of(codec)
            if sha is not None and not is_loaded(sha):
                found = await session.fetch(self._blob_sql.sql, self._blob_sql.params(sha256=sha))
                if not found or not load(sha, decompress_blob(sha, *found[0])):
                    return None  # missing or changed: ``verify`` names the segments that use it
            return sha
        untrained = self._statement("untrained_segments")
        found = await session.fetch(untrained.sql, untrained.params())
        texts = [text for (data,) in found if (text := compacted_text(SPARSE_CODEC, data)) is not None]
        if len(texts) < TRAIN_AFTER:
            return None
        try:
            sha, data = train(texts)
        except zstandard.ZstdError:  # samples it cannot learn from (too alike, too small): none for now
            return None
        await session.execute_many(self._insert_blobs, compress_blobs({sha: data}, frozenset()))
        return sha

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
