"""The event store interface every backend implements, as small capability interfaces.

eventsourcing splits its persistence the same way (``AggregateRecorder``, ``ApplicationRecorder``, ...): code that
only reads events can say so, and a backend's contract tests (``p2w_runtime/store/contract/``) are grouped by the
capability they check. Backends live one per module (``sqlite.py``, ``postgres.py``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass

from p2w_rt.schemas import ChainedEvent, NewEvent, RunStarted, StoredEvent
from p2w_runtime.errors import UserError
from p2w_runtime.store._claims import ClaimHolder


class StoreError(UserError):
    """A store problem a user can cause or fix (bad path, corrupt file, ...); the message names it."""

    exit_code = 2


class StoreUnavailable(StoreError):
    """The database went away (server down, connection broken): nothing more can be recorded until it is back."""


class IntegrityError(StoreError):
    """An append would break the log's invariants (duplicate event id, missing blob, ...)."""


class LabelTaken(IntegrityError):
    """A new run asked for a label another run of the database holds (labels are unique per database).

    ``label``, ``holder`` and ``where`` are kept apart for a command that cannot choose another label (``import``
    keeps the bundle's) and so says the way out in its own words."""

    def __init__(self, label: str, holder: str, where: str) -> None:
        super().__init__(f"label {label!r} is already used by run {holder} in {where}; choose another")
        self.label, self.holder, self.where = label, holder, where


def claimed_labels(events: Iterable[StoredEvent]) -> list[tuple[str, str]]:
    """(label, run id) of each ``run.started`` among ``events``: what a backend holds for it as it appends them."""
    claimed = []
    for event in events:
        if event.type == "run.started":
            payload = event.decode().payload
            assert isinstance(payload, RunStarted)
            claimed.append((payload.label, event.stream))
    return claimed


class ReadOnlyStore(StoreError):
    """A write was asked of a store opened read-only (a read-only file, folder or medium)."""


@dataclass(frozen=True, slots=True)
class WorkItem:
    """A task of a run recorded by workers: done, leased by a worker until ``lease_until``, or free."""

    task_id: str
    owner: str | None
    host: str | None
    pid: int | None
    lease_until: float
    done: bool


@dataclass(frozen=True, slots=True)
class StreamHead:
    """The last event of a stream: where the next append continues the chain."""

    stream: str
    last_seq: int
    last_hash: str
    last_type: str


class EventLog(ABC):
    """The append-only, hash-chained log: appends, imports, reads."""

    @abstractmethod
    async def append(self, events: Sequence[NewEvent], blobs: Mapping[str, bytes] | None = None) -> list[StoredEvent]:
        """Append ``events`` (any streams, in order) and ``blobs`` in one transaction.

        The store assigns each event the next ``seq`` of its stream, its global
        ``position`` and its chain hashes. Every blob hash a payload references
        must be in ``blobs`` or already stored. All or nothing.
        """

    def append_now(self, events: Sequence[NewEvent]) -> list[StoredEvent] | None:
        """``append(events)`` done at once, on the caller's stack, when this store can do it without waiting for
        anything (a lock, a thread, the network); None, with nothing written, when it cannot: the caller then
        awaits ``append``. Spares a writer that appends every step a task per step (docs/design/store.md,
        "Appends, fourth round"). A store that always waits (or has no such path) keeps this default."""
        return None

    async def compact(self, streams: Sequence[str]) -> int:
        """Store the events of ``streams`` (finished episodes) in this store's most compact form, read back exactly
        as before (seq, position, hashes, order), all or nothing; returns how many events moved. A store with one
        form keeps this default (docs/design/store.md, "Compaction")."""
        return 0

    @abstractmethod
    async def append_stored(self, events: Sequence[StoredEvent], blobs: Mapping[str, bytes] | None = None) -> int:
        """Insert events that already carry seq and hashes (bundle import), in one transaction.

        Events whose ``event_id`` is already present are skipped (so importing twice
        duplicates nothing); returns how many were inserted. Each event must continue
        its stream's chain exactly, else ``IntegrityError``.
        """

    @abstractmethod
    def read_stream(self, stream: str, *, after_seq: int = 0) -> AsyncIterator[StoredEvent]:
        """Events of one stream in ``seq`` order, fetched in pages (never the whole stream at once)."""

    async def read_streams(self, streams: Sequence[str]) -> AsyncIterator[StoredEvent]:
        """The events of several streams: each stream's in ``seq`` order, one stream after another, streams in
        name order. A backend reads many streams with a few queries instead of one per stream."""
        for stream in sorted(set(streams)):
            async for event in self.read_stream(stream):
                yield event

    async def read_chained(self, streams: Sequence[str]) -> AsyncIterator[ChainedEvent]:
        """``read_streams``, each event as the ``ChainedEvent`` a fold needs: SQL backends select only its
        columns (docs/design/projection.md)."""
        async for event in self.read_streams(streams):
            yield ChainedEvent.of(event)

    @abstractmethod
    def read_all(
        self, *, after_position: int = 0, stream_prefix: str | None = None, types: Sequence[str] | None = None
    ) -> AsyncIterator[StoredEvent]:
        """Events in global ``position`` order, optionally filtered, fetched in pages."""

    @abstractmethod
    async def read_event(self, stream: str, seq: int) -> StoredEvent | None:
        """The event at ``seq`` of ``stream``, or None: one row, however long the stream."""

    @abstractmethod
    async def stream_head(self, stream: str) -> StreamHead | None:
        """The last event of ``stream``, or None if it has none."""

    @abstractmethod
    async def list_streams(self, prefix: str | None = None) -> list[StreamHead]:
        """Every stream (optionally under ``prefix``) with its head, sorted by name."""

    @abstractmethod
    async def log_end(self) -> int:
        """The last position of the log (0 when empty): one index lookup, however large the log. Events are never
        deleted and every append moves it, so it names the log's state (what a cache of a read checks)."""


class BlobStore(ABC):
    """Content-addressed blobs (sha256 of the raw bytes); written only beside the events that reference them."""

    @abstractmethod
    async def get_blob(self, sha256: str) -> bytes:
        """The uncompressed bytes of a blob; ``KeyError`` if absent."""

    @abstractmethod
    def blob_hashes(self) -> AsyncIterator[str]:
        """Every stored blob hash (for integrity checks)."""


@dataclass(frozen=True, slots=True)
class Summary:
    """A row of a read model kept beside the log: ``kind`` and ``key`` name it, ``group`` and ``ordinal`` say which
    rows a view reads together and in what order, ``body`` is its owner's JSON text (the store never reads it)."""

    kind: str
    key: str
    group: str
    ordinal: int
    body: str


class SummaryRows(ABC):
    """Read models kept beside the log, current to a log position (a *mark*), so a view reads the rows it shows
    instead of scanning events. They are not facts: their owner folds the events after the mark into them, any
    process may bring them up to date, and they can be rebuilt from the log at any time (docs/design/summaries.md).
    """

    @abstractmethod
    async def summary_mark(self, model: str) -> int | None:
        """The position ``model``'s rows are current to (0: none yet), or None when this store cannot keep them
        (opened read-only on a file written before they existed): the owner then folds the whole log itself."""

    @abstractmethod
    async def read_summaries(
        self, kind: str, *, group: str | None = None, keys: Sequence[str] | None = None
    ) -> list[Summary]:
        """The rows of ``kind`` (of one ``group``, or with one of ``keys``), by ``(group, ordinal, key)``."""

    @abstractmethod
    async def write_summaries(self, model: str, rows: Sequence[Summary], *, since: int, until: int) -> bool:
        """Replace ``rows`` (by kind and key) and move ``model``'s mark from ``since`` to ``until``, in one
        transaction, only if the mark is still ``since``; False, with nothing written, when another process moved it
        first. ``ReadOnlyStore`` on a read-only store."""

    @abstractmethod
    async def clear_summaries(self, model: str, kinds: Sequence[str]) -> None:
        """Delete the rows of ``kinds`` and ``model``'s mark: the next read rebuilds them from the whole log."""


class RunCoordination(ABC):
    """What several processes working on one store's runs agree through: claims on work (labels are held by
    ``EventLog.append`` itself, in the transaction that starts a run)."""

    @abstractmethod
    async def try_claim(self, key: str, me: ClaimHolder) -> ClaimHolder | None:
        """Take claim ``key`` for ``me`` (or take it over from a dead holder); the live holder if it is taken."""

    @abstractmethod
    async def renew_claim(self, key: str, me: ClaimHolder) -> bool:
        """Mark claim ``key`` as held now, if ``me`` still holds it; False if it was taken over (or released). Its
        holder renews it every ``RENEW_S``, so a holder on another host is judged dead by its renewals."""

    @abstractmethod
    async def release_claim(self, key: str, me: ClaimHolder) -> None:
        """Release claim ``key`` if ``me`` still holds it."""

    @abstractmethod
    async def claim_holder(self, key: str) -> ClaimHolder | None:
        """The live holder of claim ``key``, or None (free, or its holder dead); nothing written, so processes that
        only look (workers checking a run is not recorded alone) cannot take each other for a holder."""

    @abstractmethod
    async def claim_holders(self, prefix: str) -> list[ClaimHolder]:
        """The live holders of the claims whose key starts with ``prefix``, in key order; nothing written. Each
        recorder sharing a run holds a claim of its own under one prefix, and this is how one sees the others."""

    @abstractmethod
    async def seed_work(self, run_id: str, task_ids: Sequence[str]) -> None:
        """Make each task of ``run_id`` a work item, free, unless it already is one (every worker seeds)."""

    @abstractmethod
    async def claim_work(self, run_id: str, me: ClaimHolder, lease_s: float) -> str | None:
        """Take a task that is not done and not leased (or whose lease expired) for ``lease_s``; None if none is."""

    @abstractmethod
    async def renew_work(self, run_id: str, task_id: str, me: ClaimHolder, lease_s: float) -> bool:
        """Extend ``me``'s lease on a task; False if another worker has taken it over meanwhile."""

    @abstractmethod
    async def finish_work(self, run_id: str, task_id: str, me: ClaimHolder) -> None:
        """Mark ``me``'s task done."""

    @abstractmethod
    async def release_work(self, run_id: str, task_id: str, me: ClaimHolder) -> None:
        """Give ``me``'s task back, free at once for the next claim (a worker stopped mid-episode)."""

    @abstractmethod
    async def work_items(self, run_id: str) -> list[WorkItem]:
        """Every work item of ``run_id``, by task id."""


class EventStore(EventLog, BlobStore, SummaryRows, RunCoordination):
    """One database holding all four: what commands open (``open_store``) and backends implement."""

    label: str
    """Names the store in messages (a file path, a database URL without its password)."""

    @abstractmethod
    async def count(self) -> tuple[int, int]:
        """(number of events, number of blobs)."""

    @abstractmethod
    async def close(self) -> None:
        """Release connections."""

    async def __aenter__(self) -> EventStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
