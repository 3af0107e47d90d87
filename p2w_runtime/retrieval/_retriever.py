"""Persona -> history index over memory banks (a folder, or the banks a run carries), opened on first use."""

from __future__ import annotations

import threading
from pathlib import Path

from p2w_runtime.data import BankFolder, BankSource
from p2w_runtime.retrieval._embedder import Embedder
from p2w_runtime.retrieval._index import DEFAULT_K, DEFAULT_THRESHOLD, HistoryIndex, SearchHit


class HistoryRetriever:
    """What the agent holds for a run: one shared embedder, one lazily opened index per persona.

    Episodes of the same persona reuse its index; a run over many personas only
    pays for the ones it meets.
    """

    def __init__(self, banks: BankSource | Path, embedder: Embedder, cache_dir: Path | None = None) -> None:
        self.banks: BankSource = BankFolder(banks) if isinstance(banks, Path) else banks
        self.embedder = embedder
        self.cache_dir = cache_dir
        self._indexes: dict[str, HistoryIndex] = {}
        self._lock = threading.Lock()

    def personas(self) -> list[str]:
        return self.banks.personas()

    def index(self, persona: str) -> HistoryIndex:
        """The persona's index; ``DataError`` for an unknown persona or a bad bank file."""
        with self._lock:
            if persona not in self._indexes:
                entries = self.banks.bank(persona)
                self._indexes[persona] = HistoryIndex.open(entries, self.embedder, self.cache_dir)
            return self._indexes[persona]

    def search(
        self, persona: str, query: str, k: int = DEFAULT_K, threshold: float = DEFAULT_THRESHOLD
    ) -> list[SearchHit]:
        return self.index(persona).search(query, k, threshold)
