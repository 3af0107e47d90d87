"""The in-memory backend: the whole ``EventStore`` in plain Python objects, for tests that need a store, not SQL.

Like eventsourcing's ``popo`` recorders, one lock guards the state and every check of a write runs before
anything is kept, so a write is all or nothing; seq and position are list lengths, so they cannot have gaps.
Events are sealed by the same ``seal_redacted`` as the SQL backends and blobs checked and compressed by the
same ``compress_blobs``, and the contract tests (``p2w_runtime/store/contract/``) hold this backend to every
guarantee they hold SQLite and PostgreSQL to. Nothing persists past the object and nothing is shared with
another process (docs/design/store.md, "The memory store").
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import NamedTuple

from p2w_rt.schemas import GENESIS_HASH, NewEvent, RunStarted, StoredEvent
from p2w_runtime.redaction import seal_redacted
from p2w_runtime.store._chain import check_continues
from p2w_runtime.store._event_store import EventStore, IntegrityError, LabelTaken, StreamHead, Summary, claimed_labels
from p2w_runtime.store._limits import TooLarge, check_blob_sizes, check_event_size
from p2w_runtime.store._memory_coordination import MemoryCoordination
from p2w_runtime.store._rows import compress_blobs, decompress_blob
from p2w_runtime.store._segments import by_stream

PAGE_SIZE = 1000
"""Events a reader hands out before it lets other tasks run (an appender, say), as a SQL reader awaits a page."""


class _Row(NamedTuple):
    """A stored event as an immutable tuple: every read builds a fresh ``StoredEvent`` from it, so what a caller
    does to an event it was given never reaches the log."""

    event_id: str
    stream: str
    seq: int
    position: int
    type: str
    schema_version: int
    recorded_at: str
    causation_id: str | None
    payload_json: str
    blobs: tuple[str, ...]
    prev_hash: str
    hash: str

    @classmethod
    def of(cls, event: StoredEvent, position: int) -> _Row:
        return cls(
            event.event_id, event.stream, event.seq, position, event.type, event.schema_version, event.recorded_at,
            event.causation_id, event.payload_json, tuple(event.blobs), event.prev_hash, event.hash,
        )  # fmt: skip

    def event(self) -> StoredEvent:
        return StoredEvent(
            self.event_id, self.stream, self.seq, self.position, self.type, self.schema_version, self.recorded_at,
            self.causation_id, self.payload_json, list(self.blobs), self.prev_hash, self.hash,
        )  # fmt: skip


_Blob = tuple[str, bytes]
"""A stored blob: its codec and its compressed bytes."""
_PageOf = Callable[[int], Sequence[_Row]]
"""The rows of a page starting at an index of one of the store's lists."""


class MemoryEventStore(MemoryCoordination, EventStore):
    """Every capability of ``EventStore`` in one process's memory; ``MemoryEventStore()`` is a fresh, empty store.

    Writes check and commit without awaiting in between, so asyncio tasks appending at once are serialised by the
    event loop itself; ``_lock`` (a thread lock, as ``popo``'s) also serialises threads that share the store, each
    with its own loop. Blobs are hash-checked and compressed before it is taken, in a worker thread.
    """

    def __init__(self, label: str = "memory") -> None:
        super().__init__()
        self.label = label
        self._lock = threading.Lock()
        self._rows: list[_Row] = []
        """The log, in position order: the event at position p is ``_rows[p - 1]``."""
        self._streams: dict[str, list[int]] = {}
        """Each stream's positions in seq order: the event at seq s is at ``_streams[stream][s - 1]``."""
        self._hashes: dict[str, str] = {}
        """Every event id, with its event's hash (what an import of it again is compared with)."""
        self._blobs: dict[str, _Blob] = {}
        self._labels: dict[str, str] = {}
        """Which run holds each label."""
        self._summaries: dict[tuple[str, str], Summary] = {}
        self._marks: dict[str, int] = {}

    # -- appending ------------------------------------------------------------------------------
    async def append(self, events: Sequence[NewEvent], blobs: Mapping[str, bytes] | None = None) -> list[StoredEvent]:
        if not events and not blobs:
            return []
        blobs = blobs or {}
        check_blob_sizes(events, blobs)
        try:
            blob_rows = await self._compressed(blobs)
            with self._lock:
                referenced = {sha for new in events for sha in new.payload.blob_hashes()}
                self._check_blobs_present(referenced, blobs)
                self._check_new_ids([new.event_id for new in events])
                labels = self._new_labels(
                    (payload.label, new.stream) for new in events if isinstance(payload := new.payload, RunStarted)
                )
                sealed, rows = self._sealed(events)
                self._keep(rows, blob_rows, labels)
        except (LabelTaken, TooLarge):
            raise
        except IntegrityError as exc:  # the SQL backends' wording
            raise IntegrityError(f"append refused by {self.label}: {exc}") from exc
        return sealed

    async def append_stored(self, events: Sequence[StoredEvent], blobs: Mapping[str, bytes] | None = None) -> int:
        blobs = blobs or {}
        try:
            blob_rows = await self._compressed(blobs)
            with self._lock:
                for event in events:
                    if self._hashes.get(event.event_id, event.hash) != event.hash:
                        raise IntegrityError(
                            f"event {event.event_id} (stream {event.stream}, seq {event.seq}) is already stored "
                            f"with different content"
                        )
                fresh = by_stream([e for e in events if e.event_id not in self._hashes])  # in SQL's order
                self._check_blobs_present({sha for e in fresh for sha in e.blobs}, blobs)
                rows = self._continuing(fresh)
                labels = self._new_labels(claimed_labels(fresh))
                self._keep(rows, blob_rows, labels)
        except LabelTaken:
            raise
        except IntegrityError as exc:  # the SQL backends' wording
            raise IntegrityError(f"import refused by {self.label}: {exc}") from exc
        return len(rows)

    async def _compressed(self, blobs: Mapping[str, bytes]) -> list[tuple[str, int, str, bytes]]:
        """Every blob checked against its hash, the ones not stored yet compressed (in a worker thread)."""
        if not blobs:
            return []
        with self._lock:
            stored = frozenset(self._blobs.keys() & blobs.keys())
        return await asyncio.to_thread(compress_blobs, blobs, stored)

    def _head(self, stream: str) -> tuple[int, str]:
        positions = self._streams.get(stream)
        return (len(positions), self._rows[positions[-1] - 1].hash) if positions else (0, GENESIS_HASH)

    def _sealed(self, events: Sequence[NewEvent]) -> tuple[list[StoredEvent], list[_Row]]:
        """Each event sealed (redacted) as the next of its stream at the next position, and its row."""
        heads: dict[str, tuple[int, str]] = {}
        sealed, rows = [], []
        for position, new in enumerate(events, start=len(self._rows) + 1):
            seq, prev = heads.get(new.stream) or self._head(new.stream)
            stored = seal_redacted(new, seq=seq + 1, prev_hash=prev, position=position)
            check_event_size(stored)
            heads[new.stream] = (stored.seq, stored.hash)
            sealed.append(stored)
            rows.append(_Row.of(stored, position))
        return sealed, rows

    def _continuing(self, events: Sequence[StoredEvent]) -> list[_Row]:
        """Imported events as rows at the next positions, each checked to continue its stream's chain exactly."""
        heads: dict[str, tuple[int, str]] = {}
        rows = []
        for position, event in enumerate(events, start=len(self._rows) + 1):
            check_continues(*(heads.get(event.stream) or self._head(event.stream)), event)
            heads[event.stream] = (event.seq, event.hash)
            rows.append(_Row.of(event, position))
        return rows

    def _check_new_ids(self, event_ids: list[str]) -> None:
        """No event id already stored, nor twice in one write (the SQL backends' UNIQUE constraint)."""
        seen: set[str] = set()
        for event_id in event_ids:
            if event_id in self._hashes or event_id in seen:
                raise IntegrityError(f"event id {event_id} is already stored")
            seen.add(event_id)

    def _check_blobs_present(self, referenced: set[str], given: Mapping[str, bytes]) -> None:
        missing = referenced - given.keys() - self._blobs.keys()
        if missing:
            raise IntegrityError(f"events reference blobs that are not stored: {', '.join(sorted(missing))[:200]}")

    def _new_labels(self, labels: Iterable[tuple[str, str]]) -> dict[str, str]:
        """The labels new runs take; ``LabelTaken`` if another run holds one (stored, or earlier in this write)."""
        taken: dict[str, str] = {}
        for label, run_id in labels:
            holder = self._labels.get(label) or taken.setdefault(label, run_id)
            if holder != run_id:
                raise LabelTaken(label, holder, self.label)
        return {label: run_id for label, run_id in taken.items() if label not in self._labels}

    def _keep(self, rows: list[_Row], blob_rows: list[tuple[str, int, str, bytes]], labels: dict[str, str]) -> None:
        """Commit a checked write: only appends and first insertions, nothing kept is ever changed."""
        for sha, _size, codec, data in blob_rows:
            self._blobs.setdefault(sha, (codec, data))
        for row in rows:
            self._rows.append(row)
            self._streams.setdefault(row.stream, []).append(row.position)
            self._hashes[row.event_id] = row.hash
        self._labels.update(labels)

    # -- reading --------------------------------------------------------------------------------
    async def read_stream(self, stream: str, *, after_seq: int = 0) -> AsyncIterator[StoredEvent]:
        positions = self._streams.get(stream, [])
        async for row in self._paged(lambda i: [self._rows[p - 1] for p in positions[i : i + PAGE_SIZE]], after_seq):
            yield row.event()

    async def read_all(
        self, *, after_position: int = 0, stream_prefix: str | None = None, types: Sequence[str] | None = None
    ) -> AsyncIterator[StoredEvent]:
        prefix, wanted = stream_prefix or "", frozenset(types) if types else None
        async for row in self._paged(lambda i: self._rows[i : i + PAGE_SIZE], after_position):
            if row.stream.startswith(prefix) and (wanted is None or row.type in wanted):
                yield row.event()

    async def _paged(self, page: _PageOf, start: int) -> AsyncIterator[_Row]:
        """The rows of ``page(i)`` from index ``start`` on, a page at a time, letting other tasks run between pages;
        rows appended meanwhile are read too, as a SQL reader's next page would."""
        while rows := page(start):
            for row in rows:
                yield row
            start += len(rows)
            await asyncio.sleep(0)

    async def read_event(self, stream: str, seq: int) -> StoredEvent | None:
        positions = self._streams.get(stream, [])
        return self._rows[positions[seq - 1] - 1].event() if 1 <= seq <= len(positions) else None

    async def stream_head(self, stream: str) -> StreamHead | None:
        positions = self._streams.get(stream)
        if not positions:
            return None
        last = self._rows[positions[-1] - 1]
        return StreamHead(stream, last.seq, last.hash, last.type)

    async def list_streams(self, prefix: str | None = None) -> list[StreamHead]:
        with self._lock:
            names = sorted(s for s in self._streams if prefix is None or s.startswith(prefix))
        return [head for name in names if (head := await self.stream_head(name)) is not None]

    async def get_blob(self, sha256: str) -> bytes:
        codec, data = self._blobs[sha256]  # KeyError if absent, as the interface says
        return decompress_blob(sha256, codec, data)

    async def blob_hashes(self) -> AsyncIterator[str]:
        with self._lock:
            hashes = sorted(self._blobs)
        for sha in hashes:
            yield sha

    async def count(self) -> tuple[int, int]:
        return len(self._rows), len(self._blobs)

    async def log_end(self) -> int:
        return len(self._rows)

    # -- summaries ------------------------------------------------------------------------------
    async def summary_mark(self, model: str) -> int | None:
        return self._marks.get(model, 0)

    async def read_summaries(
        self, kind: str, *, group: str | None = None, keys: Sequence[str] | None = None
    ) -> list[Summary]:
        with self._lock:
            if keys is not None:
                found = [row for key in set(keys) if (row := self._summaries.get((kind, key))) is not None]
            else:
                found = [row for row in self._summaries.values() if row.kind == kind]
        rows = [row for row in found if group is None or row.group == group]
        return sorted(rows, key=lambda s: (s.group, s.ordinal, s.key))

    async def write_summaries(self, model: str, rows: Sequence[Summary], *, since: int, until: int) -> bool:
        with self._lock:
            if self._marks.get(model, 0) != since:
                return False
            self._summaries.update(((row.kind, row.key), row) for row in rows)
            self._marks[model] = until
        return True

    async def clear_summaries(self, model: str, kinds: Sequence[str]) -> None:
        with self._lock:
            for key in [k for k in self._summaries if k[0] in kinds]:
                del self._summaries[key]
            self._marks.pop(model, None)

    async def close(self) -> None:
        """Nothing to release: the contents live as long as the object."""
