"""Appending to a SQL store: sealing new events, checking imported ones, blobs compressed beside the lock
(``_blob_compression.py``), the rows of a write built by ``_write_rows.py``.

An append hash-checks and compresses its blobs in worker threads before it takes the write lock, then seals
each event under the lock (docs/design/store.md), as the insert consumes its row. A writer that trusts the end of
the log it last committed continues from it without reading it (``_log_end.py``, docs/design/postgres.md).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from p2w_rt.schemas import NewEvent, RunStarted, StoredEvent
from p2w_runtime.collector import collector_paused
from p2w_runtime.store import _core as core
from p2w_runtime.store._blob_compression import compress_in_threads, settle
from p2w_runtime.store._chain import check_continues
from p2w_runtime.store._event_store import IntegrityError, LabelTaken, claimed_labels
from p2w_runtime.store._limits import TooLarge, check_blob_sizes
from p2w_runtime.store._log_end import Heads, LogEnd, LogMoved, StreamEnded
from p2w_runtime.store._rows import event_to_row
from p2w_runtime.store._segments import by_stream, segment_runs
from p2w_runtime.store._sql_base import ID_CHUNK, Session, chunk_values, fixed, in_chunk
from p2w_runtime.store._sql_stored import SqlStored
from p2w_runtime.store._sqlalchemy import sa
from p2w_runtime.store._write_rows import events_in, sealed_rows, segment_texts, split_segments

if TYPE_CHECKING:
    from sqlalchemy.sql import ClauseElement

GC_PAUSE_EVENTS = 64
"""A batch this large is sealed with the cyclic collector paused: the sealed events it keeps alive would otherwise
set off full collections over the whole heap mid-append (docs/design/postgres.md, third round)."""

_Rows = tuple[int, Iterable[tuple[Any, ...]], list[tuple[Any, ...]]]
"""How many events an append writes, the events rows (a list, or a generator sealing them as they are consumed),
and the segments rows holding the rest (``_segments.py``)."""


@fixed
def _stored_blobs() -> ClauseElement:
    return sa.select(core.BLOBS.c.sha256).where(core.BLOBS.c.sha256.in_(in_chunk()))


class SqlAppending(SqlStored):
    """``append`` and ``append_stored`` for every SQL backend."""

    optimistic_appends = False
    """Whether ``append`` may continue from the end of the log this writer last committed without reading it: a
    backend whose event insert reports a collision with newer rows as ``LogMoved`` (``_log_end.py``)."""
    alone_rows = 0
    """Optimistic appends of fewer events, with nothing to read first, go in as one statement (``_insert_alone``)."""

    async def append(self, events: Sequence[NewEvent], blobs: Mapping[str, bytes] | None = None) -> list[StoredEvent]:
        if not events and not blobs:
            return []
        blobs = blobs or {}
        check_blob_sizes(events, blobs)
        sealed: list[StoredEvent] = []
        streams: dict[str, None] = {}
        referenced: set[str] = set()
        labels: list[tuple[str, str]] = []
        for new in events:  # one pass: a large batch is thousands of events
            streams[new.stream] = None
            payload = new.payload
            if hashes := payload.blob_hashes():
                referenced.update(hashes)
            if isinstance(payload, RunStarted):
                labels.append((payload.label, new.stream))
        runs = self._segment_runs([new.stream for new in events])
        if not blobs and not labels and not runs and await self._append_alone(events, streams, referenced, sealed):
            return sealed

        async def seal(session: Session, position: int, heads: Heads[Session]) -> _Rows:
            sealed.clear()  # an optimistic attempt that collided sealed some already
            await self._check_blobs_present(session, referenced, set(blobs))
            await heads.load(session, streams)
            heads.refuse_ended(streams)
            await self._hold_labels(session, labels)
            if not runs:
                return len(events), sealed_rows(events, position, heads, sealed), []
            rows = list(sealed_rows(events, position, heads, sealed))
            await self._check_ids_new(session, [e.event_id for e in sealed])
            dictionary = await self._segment_dictionary(session, segment_texts(sealed, runs))
            return len(events), *split_segments(sealed, rows, runs, dictionary)

        with collector_paused() if len(events) >= GC_PAUSE_EVENTS else nullcontext():
            # a write with segments reads the end of the log: another writer's segment leaves no row to collide with
            optimistic = self.optimistic_appends and not runs
            await self._write(blobs, seal, refused="append refused", optimistic=optimistic)
        return sealed

    def _segment_runs(self, streams: list[str]) -> list[tuple[int, int]]:
        return segment_runs(streams) if self.has_segments else []

    async def _check_ids_new(self, session: Session, event_ids: list[str]) -> None:
        """No event id twice in a write or already in a row: what ``events``' unique index checks for rows, for a
        write some of whose events go into segments (ids inside earlier segments are not indexed)."""
        if len(set(event_ids)) < len(event_ids):
            raise IntegrityError("an event id appears twice in one append")
        for event_id in await self._stored_hashes(session, event_ids):
            raise IntegrityError(f"event id {event_id} is already stored")

    async def _append_alone(
        self, events: Sequence[NewEvent], streams: Iterable[str], referenced: set[str], sealed: list[StoredEvent]
    ) -> bool:
        """Append a small batch in one statement, without a transaction of its own, when nothing needs reading: the
        writer trusts its kept end of the log, knows every stream's head and every referenced blob is stored.

        Returns False, having written nothing, when that does not hold or the rows collided (``LogMoved``): the
        caller then appends through a transaction, which also reports any other integrity error as usual.
        """
        end = self._log_end
        if not (
            self.optimistic_appends
            and self._log_end_current
            and end is not None
            and len(events) < self.alone_rows
            and referenced <= self._stored_blobs
            and all(stream in end.heads for stream in streams)
        ):
            return False
        heads = Heads(self._head, end.heads)
        rows = list(sealed_rows(events, end.position, heads, sealed))
        try:
            await self._insert_alone(rows)
        except IntegrityError:  # nothing was written (one statement is atomic)
            self._log_end_current = False
            sealed.clear()
            return False
        except BaseException:
            self._log_end, self._log_end_current = None, False
            raise
        self._log_end = LogEnd(end.position + len(rows), heads.kept())
        return True

    async def _insert_alone(self, rows: list[tuple[Any, ...]]) -> None:
        """Insert events rows in one atomic statement that takes the write lock itself (backends with
        ``alone_rows``)."""
        raise NotImplementedError(f"{type(self).__name__} has no one-statement append")

    async def append_stored(self, events: Sequence[StoredEvent], blobs: Mapping[str, bytes] | None = None) -> int:
        blobs = blobs or {}

        async def check(session: Session, position: int, heads: Heads[Session]) -> _Rows:
            existing = await self._stored_hashes(session, [e.event_id for e in events])
            if self.has_segments:
                unseen = [e for e in events if e.event_id not in existing]
                existing.update(await self._segment_hashes(session, heads, unseen))
            for event in events:
                if existing.get(event.event_id, event.hash) != event.hash:
                    raise IntegrityError(
                        f"event {event.event_id} (stream {event.stream}, seq {event.seq}) is already stored "
                        f"with different content"
                    )
            fresh = by_stream([e for e in events if e.event_id not in existing])
            await self._check_blobs_present(session, {h for e in fresh for h in e.blobs}, set(blobs))
            rows = []
            for event in fresh:
                check_continues(*await heads.get(session, event.stream), event)
                heads.advance(event)
                position += 1
                rows.append(event_to_row(event, position))
            await self._hold_labels(session, claimed_labels(fresh))
            runs = self._segment_runs([e.stream for e in fresh])
            dictionary = await self._segment_dictionary(session, segment_texts(fresh, runs)) if runs else None
            return len(rows), *split_segments(fresh, rows, runs, dictionary)

        # never optimistic: a stale head would fail the chain check above instead of colliding
        return await self._write(blobs, check, refused="import refused", optimistic=False)

    async def _write(
        self,
        blobs: Mapping[str, bytes],
        event_rows: Callable[[Session, int, Heads[Session]], Awaitable[_Rows]],
        *,
        refused: str,
        optimistic: bool,
    ) -> int:
        """One write transaction: ``event_rows`` builds the rows under the lock, continuing the log from the given
        position and heads; the blobs go in beside them. Returns the number of events.

        The blobs are hash-checked and compressed in worker threads meanwhile. An ``optimistic`` write starts from
        the end this writer last committed, when the previous write found it still current; if another writer
        appended since, the insert collides (``LogMoved``), nothing is written, and the write is done again from
        the end read afresh (``_log_end.py``).
        """
        compressing = compress_in_threads(blobs, frozenset(self._stored_blobs.intersection(blobs)))
        optimistic = optimistic and self._log_end_current and self._log_end is not None
        try:
            while True:
                try:
                    async with self._writing() as session:
                        position, heads = await self._log_start(session, optimistic=optimistic)
                        count, rows, segments = await event_rows(session, position, heads)
                        if compressing is not None:
                            blob_rows = await compressing
                            if blob_rows:
                                await session.execute_many(self._insert_blobs, blob_rows)
                        if count:
                            # rows first: a collision there (``LogMoved``) is what an optimistic write retries on
                            await session.insert_events(self._insert_events, rows, count - events_in(segments))
                        if segments:
                            await session.execute_many(self._insert_segments, segments)
                    break
                except LogMoved:
                    if not optimistic:
                        raise
                    optimistic = False
        except BaseException as exc:
            self._log_end, self._log_end_current = None, False  # whatever failed, read the end afresh next time
            if isinstance(exc, IntegrityError) and not isinstance(exc, LabelTaken | TooLarge | StreamEnded):
                raise IntegrityError(f"{refused} by {self.label}: {exc}") from exc
            raise
        finally:
            if compressing is not None:
                settle(compressing)
        if count:
            self._log_end = LogEnd(position + count, heads.kept())
        self._stored_blobs.update(blobs)
        return count

    async def _log_start(self, session: Session, *, optimistic: bool) -> tuple[int, Heads[Session]]:
        """The position and stream heads this write continues from (under the lock).

        Optimistic: the kept end, unread. Otherwise ``max(position)`` is read; when it is where this writer's last
        commit left it, nobody appended since, so the kept heads still hold and the next write may be optimistic.
        """
        end = self._log_end
        if optimistic and end is not None:
            return end.position, Heads(self._head, end.heads)
        position = await self._position(session)
        self._log_end_current = end is not None and end.position == position
        return position, Heads(self._head, end.heads if end is not None and self._log_end_current else {})

    async def _hold_labels(self, session: Session, labels: list[tuple[str, str]]) -> None:
        """Give each new run its label, in the transaction that appends its ``run.started``.

        The primary key of ``run_labels`` decides: the insert is skipped when the label is taken, and the
        holder read back names the run that has it. Under concurrent writers only one commits the label.
        """
        for label, run_id in labels:
            await session.execute_many(self._insert_label, [(label, run_id)])
            holder = (await session.fetch(self._label_holder.sql, self._label_holder.params(label=label)))[0][0]
            if holder != run_id:
                raise LabelTaken(label, holder, self.label)

    async def _check_blobs_present(self, session: Session, referenced: set[str], given: set[str]) -> None:
        """Every blob the events reference is in this append (``given``) or stored already."""
        if not referenced:
            return
        wanted = sorted(referenced - given - self._stored_blobs)
        present: set[str] = set()
        stored = self._statement("stored_blobs")
        for i in range(0, len(wanted), ID_CHUNK):
            rows = await session.fetch(stored.sql, stored.params(**chunk_values(wanted[i : i + ID_CHUNK])))
            present.update(row[0] for row in rows)
        missing = set(wanted) - present
        if missing:
            raise IntegrityError(f"events reference blobs that are not stored: {', '.join(sorted(missing))[:200]}")
        self._stored_blobs.update(present)
