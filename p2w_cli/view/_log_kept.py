"""What the viewer keeps until a store's log moves: the log is append-only, so its end names its state, and a value
read at one end stays true until the next append (docs/design/view.md)."""

from __future__ import annotations

from typing import Generic, TypeVar

from p2w_runtime.domain import RunInfo, list_runs, match_run
from p2w_runtime.store import EventStore


class RunIndex:
    """Each store's runs (``list_runs``) with the log end they were listed at. The log is append-only, so its
    last position names its state: while it is unchanged a page finds its runs here, the next append lists again.
    ``log_end`` is one index lookup, where ``count()`` scanned the whole events table (docs/design/view.md)."""

    def __init__(self) -> None:
        self.listed = 0
        """How often ``list_runs`` ran: what a page after an append costs, and the cache's test."""
        self._kept: dict[int, tuple[int, list[RunInfo]]] = {}

    async def runs(self, store: EventStore) -> tuple[int, list[RunInfo]]:
        """(the log end, every run of ``store`` at that end)."""
        end = await store.log_end()
        kept = self._kept.get(id(store))
        if kept is not None and kept[0] == end:
            return kept
        self.listed += 1
        self._kept[id(store)] = (end, await list_runs(store))
        return self._kept[id(store)]

    async def find(self, store: EventStore, ref: str) -> tuple[int, RunInfo]:
        end, runs = await self.runs(store)
        return end, match_run(runs, ref, store.label)


T = TypeVar("T")


class LogKept(Generic[T]):
    """Values derived from a run (its usage, query texts, plots), each kept under a key with the log's event count
    it was made at (as ``RunCache``): read again only after an append; the least recently used dropped beyond
    ``size``. A value kept under end 0 is one that stays valid as the log grows (a ``UsageScan`` catches up)."""

    def __init__(self, size: int = 16) -> None:
        self.size = size
        self.entries: dict[str, tuple[int, T]] = {}

    def get(self, key: str, end: int) -> T | None:
        kept = self.entries.pop(key, None)
        if kept is None or kept[0] != end:
            return None
        self.entries[key] = kept
        return kept[1]

    def put(self, key: str, end: int, value: T) -> None:
        self.entries[key] = (end, value)
        while len(self.entries) > self.size:
            self.entries.pop(next(iter(self.entries)))
