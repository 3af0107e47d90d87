"""The store's compression dictionary: found, or trained once the store holds enough segments without one, for every
segment a write makes (an imported or migrated episode, a bundle's, a compacted one) to share what episodes repeat
(the agent's prompts, the sites' page structure) instead of each carrying its own copy (``_dictionaries.py``;
docs/design/store.md, "Compaction")."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice
from typing import TYPE_CHECKING

import zstandard

from p2w_runtime.store import _core as core
from p2w_runtime.store._dictionaries import DICTIONARY_MARK, TRAIN_AFTER, dictionary_of, is_loaded, load, train
from p2w_runtime.store._rows import compress_blobs, decompress_blob
from p2w_runtime.store._segments import CODEC, SPARSE_CODEC, plain_text
from p2w_runtime.store._sql_base import Session, SqlStoreBase, fixed
from p2w_runtime.store._sqlalchemy import sa

if TYPE_CHECKING:
    from sqlalchemy import ClauseElement


@fixed
def _latest_dictionary() -> ClauseElement:
    s = core.SEGMENTS.c
    named = s.codec.like(f"%{DICTIONARY_MARK}%")
    return sa.select(s.codec).where(named).order_by(s.first_position.desc()).limit(1)


@fixed
def _untrained_segments() -> ClauseElement:
    s = core.SEGMENTS.c
    return (
        sa.select(s.codec, s.data)
        .where(s.codec.in_([CODEC, SPARSE_CODEC]))
        .order_by(s.first_position)
        .limit(4 * TRAIN_AFTER)
    )


class SqlDictionary(SqlStoreBase):
    """``_segment_dictionary`` for the writes that make segments. Two writers training at once each commit their own
    dictionary; every segment names the one it was compressed with, so both decode (one is 64 KiB wasted)."""

    _dictionary: str | None = None
    """The hash of the dictionary this store's segments use, once one is committed."""

    async def _segment_dictionary(self, session: Session, writing: Iterable[bytes] = ()) -> str | None:
        """The dictionary (loaded) the segments written in ``session`` are compressed with: the store's newest, or
        one trained now, in this transaction, on the store's segments without one and the text of those being
        written (``writing``: a migration's first write makes hundreds), once there are ``TRAIN_AFTER``; None until
        then. A found one is kept (a dictionary is never changed); a trained one is found by the next write, once
        this transaction committed it."""
        if self._dictionary is None:
            self._dictionary = await self._find(session)
        return self._dictionary or await self._train(session, writing)

    async def _find(self, session: Session) -> str | None:
        latest = self._statement("latest_dictionary")
        for (codec,) in await session.fetch(latest.sql, latest.params()):
            sha = dictionary_of(codec)
            if sha is not None and not is_loaded(sha):
                found = await session.fetch(self._blob_sql.sql, self._blob_sql.params(sha256=sha))
                if not found or not load(sha, decompress_blob(sha, *found[0])):
                    return None  # missing or changed: ``verify`` names the segments that use it
            return sha
        return None

    async def _train(self, session: Session, writing: Iterable[bytes]) -> str | None:
        untrained = self._statement("untrained_segments")
        found = await session.fetch(untrained.sql, untrained.params())
        texts = [text for codec, data in found if (text := plain_text(codec, data)) is not None]
        texts += islice(writing, max(0, 4 * TRAIN_AFTER - len(texts)))
        if len(texts) < TRAIN_AFTER:
            return None
        try:
            sha, data = train(texts)
        except zstandard.ZstdError:  # samples it cannot learn from (too alike, too small): none for now
            return None
        await session.execute_many(self._insert_blobs, compress_blobs({sha: data}, frozenset()))
        return sha
