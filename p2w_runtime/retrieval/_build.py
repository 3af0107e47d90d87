"""Index every persona of a history folder up front (``p2w-rt history index``), so runs start warm."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from p2w_runtime.data import find_memory_bank, list_personas, load_memory_bank
from p2w_runtime.retrieval._embedder import Embedder
from p2w_runtime.retrieval._errors import RetrievalError
from p2w_runtime.retrieval._index import HistoryIndex

BuildProgress = Callable[[str, int, int], None]
"""Called as ``progress(persona, entries_done, entries_total)`` over the whole folder."""


@dataclass(frozen=True, slots=True)
class PersonaIndexed:
    persona: str
    entries: int
    encoded: int
    seconds: float
    index_hash: str


@dataclass(frozen=True, slots=True)
class IndexSummary:
    model_id: str
    personas: list[PersonaIndexed]
    seconds: float

    @property
    def entries(self) -> int:
        return sum(p.entries for p in self.personas)

    @property
    def encoded(self) -> int:
        return sum(p.encoded for p in self.personas)

    @property
    def cached(self) -> int:
        return self.entries - self.encoded


def index_history(
    history_dir: Path,
    embedder: Embedder,
    cache_dir: Path | None = None,
    *,
    progress: BuildProgress | None = None,
) -> IndexSummary:
    """Open (building where needed) the index of each persona; every bank is validated before any encoding."""
    started = time.perf_counter()
    names = list_personas(history_dir)
    if not names:
        raise RetrievalError(f"{history_dir}: no memory banks (<persona>.json) to index")
    banks = {name: load_memory_bank(find_memory_bank(history_dir, name)) for name in names}
    total = sum(len(entries) for entries in banks.values())
    done = 0
    indexed: list[PersonaIndexed] = []
    for name, entries in banks.items():
        offset = done

        def report(finished: int, _count: int, name: str = name, offset: int = offset) -> None:
            if progress is not None:
                progress(name, offset + finished, total)

        opened_at = time.perf_counter()
        index = HistoryIndex.open(entries, embedder, cache_dir, progress=report)
        indexed.append(
            PersonaIndexed(name, index.size, index.encoded_count, time.perf_counter() - opened_at, index.index_hash)
        )
        done += len(entries)
    return IndexSummary(embedder.model_id, indexed, time.perf_counter() - started)
