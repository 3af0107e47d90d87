"""Persona -> history index over a folder of memory banks, opened on first use."""

from __future__ import annotations

import threading
from pathlib import Path

from p2w_runtime.data import find_memory_bank, list_personas, load_memory_bank
from p2w_runtime.retrieval._embedder import Embedder
from p2w_runtime.retrieval._index import DEFAULT_K, DEFAULT_THRESHOLD, HistoryIndex, SearchHit


class HistoryRetriever:
    """What the agent holds for a run: one shared embedder, one lazily opened index per persona.

    Episodes of the same persona reuse its index; a run over many personas only
    pays for the ones it meets.
    """

    def __init__(self, history_dir: Path, embedder: Embedder, cache_dir: Path | None = None) -> None:
        self.history_dir = Path(history_dir)
        self.embedder = embedder
        self.cache_dir = cache_dir
        self._indexes: dict[str, HistoryIndex] = {}
        self._lock = threading.Lock()

    def personas(self) -> list[str]:
        return list_personas(self.history_dir)

    def index(self, persona: str) -> HistoryIndex:
        """The persona's index; ``DataError`` for an unknown persona or a bad bank file."""
        with self._lock:
            if persona not in self._indexes:
                entries = load_memory_bank(find_memory_bank(self.history_dir, persona))
                self._indexes[persona] = HistoryIndex.open(entries, self.embedder, self.cache_dir)
            return self._indexes[persona]

    def search(
        self, persona: str, query: str, k: int = DEFAULT_K, threshold: float = DEFAULT_THRESHOLD
    ) -> list[SearchHit]:
        return self.index(persona).search(query, k, threshold)
