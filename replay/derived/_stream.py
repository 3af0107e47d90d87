"""Results derived from recorded episodes (judgments, error classifications), as the store keeps them.

Each kind has one ``{run_id}{suffix}`` stream per run, never an episode's own stream: deriving a
result never changes the episode's last hash, which is the trajectory hash results are cached by.
Nothing is overwritten; the latest result with a cache key is the one that counts.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from p2w_runtime.store import EventStore

CacheKey = tuple[str, str, str, str]
"""(trajectory hash, judge or classifier id, its version, config hash): what a cached result must match."""


class Derived(Protocol):
    """What the cache reads of a derived payload (``Judgment``, ``ErrorClassified``)."""

    @property
    def type(self) -> str: ...

    @property
    def episode_stream(self) -> str: ...

    @property
    def status(self) -> str: ...

    @property
    def error(self) -> str | None: ...


P = TypeVar("P", bound=Derived)


@dataclass(frozen=True, slots=True)
class DerivedRecord(ABC, Generic[P]):
    """One stored result and the event that holds it; a subclass names its cache key (and the payload)."""

    event_id: str
    recorded_at: str
    payload: P

    @property
    @abstractmethod
    def key(self) -> CacheKey: ...


R = TypeVar("R", bound=DerivedRecord[Any])


@dataclass(frozen=True, slots=True)
class DerivedStream(Generic[P, R]):
    """Where one kind of result lives: the per-run stream, its event type, and the record it reads back as."""

    suffix: str
    event_type: str
    payload_type: type[P]
    record: Callable[[str, str, P], R]

    def name(self, run_id: str) -> str:
        return f"{run_id}{self.suffix}"

    async def read(self, store: EventStore, run_id: str) -> list[R]:
        """Every result of a run, oldest first (the ``llm.call`` events beside them are skipped)."""
        records: list[R] = []
        async for stored in store.read_stream(self.name(run_id)):
            if stored.type != self.event_type:
                continue
            payload = stored.decode().payload
            assert isinstance(payload, self.payload_type)
            records.append(self.record(stored.event_id, stored.recorded_at, payload))
        return records


def latest_by_key(records: Iterable[R]) -> dict[CacheKey, R]:
    """The latest record per cache key, failed ones included (a retry that fails the same way reuses it)."""
    return {record.key: record for record in records}
