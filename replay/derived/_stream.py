"""Results derived from recorded episodes (judgments, error classifications), as the store keeps them.

Each kind has one ``{run_id}{suffix}`` stream per run, never an episode's own stream: deriving a
result never changes the episode's last hash, which is the trajectory hash results are cached by. Its name is one the
domain reserves (``DERIVED_NAMES``), which no task id may take.
Nothing is overwritten; the latest result with a cache key is the one that counts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from p2w_rt.schemas import StoredEvent
from p2w_runtime.collector import collector_paused
from p2w_runtime.domain import DERIVED_NAMES, under
from p2w_runtime.errors import UserError
from p2w_runtime.store import TREE_SEPARATOR as SEPARATOR
from p2w_runtime.store import EventStore

CacheKey = tuple[str, str, str, str]
"""(trajectory hash, judge or classifier id, its version, config hash): what a cached result must match."""


class Derived(Protocol):
    """What the cache reads of a derived payload (``Judgment``, ``ErrorClassified``): the fields
    ``Producer.keyed`` gives it, but for ``{kind}_id`` and ``{kind}_version``, named by the kind."""

    @property
    def type(self) -> str: ...

    @property
    def episode_stream(self) -> str: ...

    @property
    def trajectory_hash(self) -> str: ...

    @property
    def config_hash(self) -> str: ...

    @property
    def status(self) -> str: ...

    @property
    def error(self) -> str | None: ...


P = TypeVar("P", bound=Derived)


@dataclass(frozen=True, slots=True)
class DerivedRecord(Generic[P]):
    """One stored result and the event that holds it; a subclass names its producers' ``kind`` (and the payload)."""

    kind: ClassVar[str]
    """The producers' ``Producer.kind``: the payload names its producer in ``{kind}_id`` and ``{kind}_version``."""
    event_id: str
    recorded_at: str
    payload: P

    @property
    def key(self) -> CacheKey:
        p = self.payload
        return (p.trajectory_hash, self.producer_id, getattr(p, f"{self.kind}_version"), p.config_hash)

    @property
    def producer_id(self) -> str:
        """The id of the producer that made it (a judge's, a classifier's): ``key[1]``, without building the key
        for every result of a large run's table."""
        producer: str = getattr(self.payload, f"{self.kind}_id")
        return producer


R = TypeVar("R", bound=DerivedRecord[Any])


class NarrowResult(BaseModel):
    """What every narrow read of a derived payload keeps (its key but the producer's, its status and error): a table of
    scores or labels validates these and its own few fields, and skips the rest of the stored text."""

    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)

    episode_stream: str
    task_id: str
    trajectory_hash: str
    config_hash: str
    status: Literal["ok", "failed"] = "ok"
    error: str | None = None


N = TypeVar("N", bound=NarrowResult)


def narrow_decode(narrow: type[N], version: int) -> Callable[[StoredEvent], N]:
    """A ``DerivedStream.decode`` reading a few fields of a payload whose schema is at ``version``: from the stored
    text when it is at that version; else (an older version to upcast, or text that does not validate: its error is
    the whole payload's) from the payload decoded whole. The skipped fields are not checked (``verify`` checks every
    payload)."""

    def decode(stored: StoredEvent) -> N:
        if stored.schema_version == version:
            try:
                return narrow.model_validate_json(stored.payload_json)
            except ValidationError:
                pass
        return narrow.model_validate(stored.decode_payload(), from_attributes=True)

    return decode


@dataclass(frozen=True, slots=True)
class DerivedStream(Generic[P, R]):
    """Where one kind of result lives: the per-run stream, its event type, and the record it reads back as.

    ``decode`` reads a stored result as ``payload_type``; by default the whole payload, validated. A reader that needs
    a few fields of many results (a table of scores) gives a narrower model and the function validating it."""

    suffix: str
    event_type: str
    payload_type: type[P]
    record: type[R]
    decode: Callable[[StoredEvent], P] | None = None

    def __post_init__(self) -> None:
        if self.suffix not in {f"{SEPARATOR}{name}" for name in DERIVED_NAMES}:
            raise ValueError(
                f"derived stream RUN{self.suffix} ({self.event_type}) is not one of the names p2w_runtime.domain "
                f"reserves ({', '.join(sorted(DERIVED_NAMES))}): an episode may already hold any other"
            )

    def name(self, run_id: str) -> str:
        return f"{run_id}{self.suffix}"

    async def check_free(self, store: EventStore, run_id: str) -> None:
        """Refuse, before anything is made, a run one of whose episodes holds this stream (its task id was taken
        before such ids were refused): results cannot follow that episode's events. Its episodes still read."""
        first = await store.read_event(self.name(run_id), 1)
        if first is not None and first.type == "episode.started":
            raise UserError(
                f"run {run_id}: episode {self.suffix.removeprefix(SEPARATOR)!r}, recorded before task ids could not "
                f"take that name, holds {self.name(run_id)}, where its {self.record.kind} results go: none can be "
                "stored for this run"
            )

    def record_of(self, stored: StoredEvent) -> R | None:
        """``stored`` read back as a result; None for the other events of the stream (its ``llm.call``, its seals)."""
        if stored.type != self.event_type:
            return None
        payload = stored.decode_payload() if self.decode is None else self.decode(stored)  # no envelope model
        assert isinstance(payload, self.payload_type)
        return self.record(stored.event_id, stored.recorded_at, payload)

    async def read(self, store: EventStore, run_id: str) -> list[R]:
        """Every result of a run, oldest first. All of them are kept, so the collector is paused meanwhile: its
        collections would only rescan them (docs/design/startup.md, thirteenth round)."""
        records: list[R] = []
        with collector_paused():
            async for stored in store.read_stream(self.name(run_id)):
                if (record := self.record_of(stored)) is not None:
                    records.append(record)
        return records

    async def current(self, store: EventStore, run_id: str) -> dict[tuple[str, str], R]:
        """The latest successful result per (episode stream, producer id) made on the run's episodes as they are
        now (``latest_current``)."""
        return latest_current(await self.read(store, run_id), await run_heads(store, run_id))


async def run_heads(store: EventStore, run_id: str) -> dict[str, str]:
    """Each stream of the run's tree -> its last hash: an episode's ``EpisodeRef.hash``, which a result made on the
    episode as it is now carries as its trajectory hash."""
    return {h.stream: h.last_hash for h in await store.list_streams(prefix=under(run_id))}


def current_of(records: Iterable[R], heads: Mapping[str, str]) -> list[R]:
    """The successful results made on the episodes as ``heads`` (stream -> ``EpisodeRef.hash``) has them, oldest
    first: a result of an episode that changed since (a rerun appended to it) is stale. The one rule of "current"
    for every derived kind, whoever reads it (metrics, agreement, exports, the viewer)."""
    return [
        r
        for r in records
        if r.payload.status == "ok" and heads.get(r.payload.episode_stream) == r.payload.trajectory_hash
    ]


def latest_current(records: Iterable[R], heads: Mapping[str, str]) -> dict[tuple[str, str], R]:
    """``current_of``, the latest per (episode stream, producer id): what a table of scores or labels shows."""
    return {(r.payload.episode_stream, r.producer_id): r for r in current_of(records, heads)}


def latest_by_key(records: Iterable[R]) -> dict[CacheKey, R]:
    """The latest record per cache key, failed ones included (a retry that fails the same way reuses it)."""
    return {record.key: record for record in records}
