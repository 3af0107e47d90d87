"""A persona's history index: exact inner-product search over unit vectors of ``"{type}: {object}"``."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import NamedTuple

import faiss
import numpy as np
import structlog

from p2w_rt.schemas import MemoryEntry, RetrievalHit
from p2w_runtime.data import memory_bank_hash
from p2w_runtime.retrieval import _cache
from p2w_runtime.retrieval._embedder import Embedder, ProgressCallback
from p2w_runtime.retrieval._errors import RetrievalError
from p2w_runtime.retrieval._order import ranked

DEFAULT_K = 20
DEFAULT_THRESHOLD = 0.5
"""Persona2Web's retrieval settings: top 20 entries with cosine similarity of at least 0.5."""

_EXTRA_CANDIDATES = 10
"""Candidates fetched past ``k``, enough for the tie groups of the bundled banks (at most 6 entries share a score)."""

log = structlog.get_logger()


class SearchHit(NamedTuple):
    """One search result: a plain tuple, built 20 times per search and valid by construction.

    20 validated ``RetrievalHit`` models cost about 40% of FAISS's own search time on a
    2,000-entry bank; ``to_retrieval_hit`` validates once a hit is recorded.
    """

    entry_id: int
    """Position of the entry in the bank."""
    rank: int
    """1 for the best hit."""
    score: float
    """Cosine similarity."""
    entry: MemoryEntry

    def to_retrieval_hit(self) -> RetrievalHit:
        """The validated schema model that ``history.retrieval`` events carry."""
        return RetrievalHit(entry_id=self.entry_id, rank=self.rank, score=self.score, entry=self.entry)


_new_hit = partial(tuple.__new__, SearchHit)
"""``SearchHit`` from a 4-tuple, skipping NamedTuple's Python-level ``__new__``.

Right after FAISS's scan every step of a search is a cache miss; docs/design/retrieval-cache.md measures them.
"""


class HistoryIndex:
    """Search one memory bank; entry ids are positions in the bank, scores are cosine similarities."""

    def __init__(
        self,
        entries: Sequence[MemoryEntry],
        embeddings: np.ndarray,
        index: faiss.Index,
        embedder: Embedder,
        bank_hash: str,
        *,
        encoded_count: int,
    ) -> None:
        self._entries = tuple(entries)
        self._embeddings = embeddings
        self._embeddings.setflags(write=False)
        self._index = index
        self._embedder = embedder
        self.bank_hash = bank_hash
        self.index_hash = _cache.index_hash(embedder.model_id, bank_hash)
        self.encoded_count = encoded_count
        """Entries encoded to build this index: 0 when it came from the cache."""

    @classmethod
    def open(
        cls,
        entries: Sequence[MemoryEntry],
        embedder: Embedder,
        cache_dir: Path | None = None,
        *,
        progress: ProgressCallback | None = None,
    ) -> HistoryIndex:
        """The index of ``entries``, from the cache when model and bank are unchanged, else encoded and cached."""
        if not entries:
            raise RetrievalError("cannot index an empty memory bank")
        key = _cache.CacheKey(
            model_id=embedder.model_id,
            model_fingerprint=embedder.fingerprint,
            bank_hash=memory_bank_hash(entries),
            count=len(entries),
            dim=embedder.dim,
        )
        folder = key.folder(Path(cache_dir) if cache_dir is not None else _cache.default_cache_dir())
        cached = _cache.load(folder, key)
        if cached is not None:
            embeddings, index = cached
            if progress is not None:
                progress(len(entries), len(entries))
            return cls(entries, embeddings, index, embedder, key.bank_hash, encoded_count=0)
        log.info("retrieval.index.encode", model=embedder.model_id, entries=len(entries), folder=str(folder))
        embeddings = embedder.encode([entry.key_text() for entry in entries], progress=progress)
        index = _flat_index(embeddings)
        _cache.store(folder, key, embeddings, index)
        return cls(entries, embeddings, index, embedder, key.bank_hash, encoded_count=len(entries))

    @classmethod
    def from_embeddings(
        cls, entries: Sequence[MemoryEntry], embeddings: np.ndarray, embedder: Embedder
    ) -> HistoryIndex:
        """An uncached index over vectors already encoded by ``embedder`` (e.g. several banks searched as one)."""
        embeddings = np.array(embeddings, dtype=np.float32, order="C")  # a copy: the index freezes its array
        if not entries or embeddings.shape != (len(entries), embedder.dim):
            raise RetrievalError(
                f"need one {embedder.dim}-d vector per entry, got {embeddings.shape} for {len(entries)}"
            )
        return cls(entries, embeddings, _flat_index(embeddings), embedder, memory_bank_hash(entries), encoded_count=0)

    @property
    def model_id(self) -> str:
        return self._embedder.model_id

    @property
    def size(self) -> int:
        return len(self._entries)

    @property
    def entries(self) -> tuple[MemoryEntry, ...]:
        return self._entries

    @property
    def embeddings(self) -> np.ndarray:
        """The unit vectors, row i for entry i (read-only)."""
        return self._embeddings

    def encode_query(self, query: str) -> np.ndarray:
        if not query.strip():
            raise RetrievalError("history query is empty")
        return self._embedder.query_vector(query)

    def search(self, query: str, k: int = DEFAULT_K, threshold: float = DEFAULT_THRESHOLD) -> list[SearchHit]:
        """Up to ``k`` entries with cosine >= ``threshold``, best first (rank 1)."""
        return self.search_vector(self.encode_query(query), k, threshold)

    def search_vector(
        self, vector: np.ndarray, k: int = DEFAULT_K, threshold: float = DEFAULT_THRESHOLD
    ) -> list[SearchHit]:
        """``search`` for a query already encoded (by the same embedder).

        Hits are in ``ranked`` order (tie groups by entry id, docs/design/retrieval-cache.md "Hit order"), so a few
        candidates past ``k`` are fetched: a tie group straddling ``k`` is cut by id, not by FAISS's tie order.
        """
        if k < 1:
            raise RetrievalError(f"k must be at least 1, got {k}")
        entries = self._entries
        query = vector.reshape(1, -1)
        fetch = min(k + _EXTRA_CANDIDATES, len(entries))
        while True:
            found_scores, found_ids = self._index.search(query, fetch)
            (scores,), (ids,) = found_scores.tolist(), found_ids.tolist()  # the one query's row, as Python numbers
            hits = ranked(ids, scores, k, threshold, complete=fetch == len(entries))
            if hits is not None:
                return [
                    _new_hit((entry_id, rank, score, entries[entry_id]))
                    for rank, (entry_id, score) in enumerate(hits, start=1)
                ]
            fetch = min(2 * fetch, len(entries))  # the tie group at the cut goes on past the candidates


def _flat_index(embeddings: np.ndarray) -> faiss.Index:
    index = faiss.IndexFlatIP(embeddings.shape[1])
    index.add(embeddings)
    return index
