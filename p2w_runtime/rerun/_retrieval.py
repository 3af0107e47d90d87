"""``rerun --recorded-retrieval``: every history query answered with the hits the recording retrieved.

Subclasses of the live retriever and index that keep nothing of theirs but the interface the agent's
personalization module calls (``index(persona).search``, ``model_id``, ``index_hash``): no embedder is
loaded and no memory bank is read, so a rerun checks the agent's code with retrieval held fixed.
"""

from __future__ import annotations

import msgspec

from p2w_rt.schemas import MemoryEntry
from p2w_runtime.rerun._mismatch import Divergence, Mismatch
from p2w_runtime.rerun._recorded import RecordedEpisode
from p2w_runtime.retrieval import HistoryIndex, HistoryRetriever, SearchHit


class RecordedIndex(HistoryIndex):
    def __init__(self, episode: RecordedEpisode, divergence: Divergence) -> None:  # noqa: D107
        # No super().__init__: there is no FAISS index or embedder, only the recorded answers.
        self._recorded = list(episode.retrievals)
        self._divergence = divergence
        self._next = 0
        first = self._recorded[0] if self._recorded else None
        self._model_id = first.model_id if first else "recorded"
        self.index_hash = first.index_hash if first else "recorded"

    @property
    def model_id(self) -> str:
        return self._model_id

    def search(self, query: str, k: int = 20, threshold: float = 0.5) -> list[SearchHit]:
        recorded = self._recorded[self._next] if self._next < len(self._recorded) else None
        if recorded is None or recorded.query != query:
            raise self._divergence.raise_(
                Mismatch(
                    recorded.step if recorded else None,
                    "history query differs",
                    recorded.query if recorded else None,
                    query,
                )
            )
        self._next += 1
        self._model_id, self.index_hash = recorded.model_id, recorded.index_hash
        return [
            SearchHit(h.entry_id, h.rank, h.score or 0.0, MemoryEntry(**msgspec.structs.asdict(h.entry)))
            for h in recorded.hits
        ]


class RecordedRetriever(HistoryRetriever):
    def __init__(self, episode: RecordedEpisode, divergence: Divergence) -> None:  # noqa: D107
        # No super().__init__: nothing is searched, see the module docstring.
        self._index = RecordedIndex(episode, divergence)

    def index(self, persona: str) -> HistoryIndex:
        return self._index
