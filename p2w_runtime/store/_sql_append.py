"""Appending to a SQL store: sealing new events, checking imported ones, blobs compressed beside the lock.

An append hash-checks and compresses its blobs in worker threads before it takes the write lock, then seals
each event under the lock (docs/design/store.md), as the insert consumes its row. A writer that trusts the end of
the log it last committed continues from it without reading it (``_log_end.py``, docs/design/postgres.md).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from p2w_runtime.collector import collector_paused
from p2w_runtime.redaction import seal_redacted
from p2w_runtime.store import _core as core
from p2w_runtime.store._chain import check_continues
from p2w_runtime.store._core import OnFirstUse
from p2w_runtime.store._event_store import IntegrityError, LabelTaken
from p2w_runtime.store._log_end import Heads, LogEnd, LogMoved
from p2w_runtime.store._rows import compress_blobs, event_to_row
from p2w_runtime.store._sql_base import ID_CHUNK, Session, SqlStoreBase
from schemas import NewEvent, RunStarted, StoredEvent

if TYPE_CHECKING:
    import sqlalchemy as sa
else:
    sa = OnFirstUse("sqlalchemy")

BLOBS_PER_THREAD = 16
"""A batch with fewer blobs is compressed on one worker thread; a thread hand-off costs more than it saves."""
COMPRESSION_THREADS = os.cpu_count() or 1

GC_PAUSE_EVENTS = 64
"""A batch this large is sealed with the cyclic collector paused: the sealed events it keeps alive would otherwise
set off full collections over the whole heap mid-append (docs/design/postgres.md, third round)."""

_Rows = tuple[int, Iterable[tuple[Any, ...]]]
"""How many events rows an append writes, and the rows (a list, or a generator sealing them as they are consumed)."""


class SqlAppending(SqlStoreBase):
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
        if not blobs and not labels and await self._append_alone(events, streams, referenced, sealed):
            return sealed

        async def seal(session: Session, position: int, heads: Heads[Session]) -> _Rows:
            sealed.clear()  # an optimistic attempt that collided sealed some already
            await self._check_blobs_present(session, referenced, set(blobs))
            await heads.load(session, streams)
            await self._hold_labels(session, labels)
            return len(events), _sealed_rows(events, position, heads, sealed)

        with collector_paused() if len(events) >= GC_PAUSE_EVENTS else nullcontext():
            await self._write(blobs, seal, refused="append refused", optimistic=self.optimistic_appends)
        return sealed

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
        rows = list(_sealed_rows(events, end.position, heads, sealed))
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
            for event in events:
                if existing.get(event.event_id, event.hash) != event.hash:
                    raise IntegrityError(
                        f"event {event.event_id} (stream {event.stream}, seq {event.seq}) is already stored "
                        f"with different content"
                    )
            fresh = [e for e in events if e.event_id not in existing]
            await self._check_blobs_present(session, {h for e in fresh for h in e.blobs}, set(blobs))
            rows = []
            for event in fresh:
                check_continues(*await heads.get(session, event.stream), event)
                heads.advance(event)
                position += 1
                rows.append(event_to_row(event, position))
            await self._hold_labels(session, [(_label(e), e.stream) for e in fresh if e.type == RUN])
            return len(rows), rows

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
        compressing = self._compress(blobs)
        optimistic = optimistic and self._log_end_current and self._log_end is not None
        try:
            while True:
                try:
                    async with self._writing() as session:
                        position, heads = await self._log_start(session, optimistic=optimistic)
                        count, rows = await event_rows(session, position, heads)
                        if compressing is not None:
                            blob_rows = await compressing
                            if blob_rows:
                                await session.execute_many(self._insert_blobs, blob_rows)
                        if count:
                            await session.insert_events(self._insert_events, rows, count)
                    break
                except LogMoved:
                    if not optimistic:
                        raise
                    optimistic = False
        except BaseException as exc:
            self._log_end, self._log_end_current = None, False  # whatever failed, read the end afresh next time
            if isinstance(exc, IntegrityError) and not isinstance(exc, LabelTaken):
                raise IntegrityError(f"{refused} by {self.label}: {exc}") from exc
            raise
        finally:
            if compressing is not None:
                _settle(compressing)
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

    def _compress(self, blobs: Mapping[str, bytes]) -> asyncio.Future[list[tuple[str, int, str, bytes]]] | None:
        """Start checking and compressing ``blobs`` in worker threads: one per CPU for a large batch."""
        if not blobs:
            return None
        known = frozenset(self._stored_blobs.intersection(blobs))
        loop = asyncio.get_running_loop()
        parts = min(COMPRESSION_THREADS, len(blobs) // BLOBS_PER_THREAD)
        if parts < 2:
            return loop.run_in_executor(None, compress_blobs, blobs, known)
        items = list(blobs.items())
        work = [loop.run_in_executor(None, compress_blobs, dict(items[i::parts]), known) for i in range(parts)]
        return asyncio.ensure_future(_joined(work))

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

    async def _stored_hashes(self, session: Session, event_ids: list[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        for i in range(0, len(event_ids), ID_CHUNK):
            e = core.EVENTS.c
            query = sa.select(e.event_id, e.hash).where(e.event_id.in_(event_ids[i : i + ID_CHUNK]))
            found.update(await self._fetch_once(session, query))
        return found

    async def _check_blobs_present(self, session: Session, referenced: set[str], given: set[str]) -> None:
        """Every blob the events reference is in this append (``given``) or stored already."""
        if not referenced:
            return
        wanted = sorted(referenced - given - self._stored_blobs)
        present: set[str] = set()
        for i in range(0, len(wanted), ID_CHUNK):
            b = core.BLOBS.c
            query = sa.select(b.sha256).where(b.sha256.in_(wanted[i : i + ID_CHUNK]))
            present.update(row[0] for row in await self._fetch_once(session, query))
        missing = set(wanted) - present
        if missing:
            raise IntegrityError(f"events reference blobs that are not stored: {', '.join(sorted(missing))[:200]}")
        self._stored_blobs.update(present)


def _sealed_rows(
    events: Sequence[NewEvent], position: int, heads: Heads[Session], sealed: list[StoredEvent]
) -> Iterator[tuple[Any, ...]]:
    """Seal each event (redacted) when the insert asks for its row, collecting the sealed events in ``sealed``.

    A COPY consumes rows as it sends them, so the server inserts the first rows while the next are sealed.
    """
    for new in events:
        seq, prev = heads.known(new.stream)
        position += 1
        stored = seal_redacted(new, seq=seq + 1, prev_hash=prev, position=position)
        heads.advance(stored)
        sealed.append(stored)
        yield event_to_row(stored, position)


async def _joined(parts: list[asyncio.Future[list[Any]]]) -> list[Any]:
    try:
        return [row for part in await asyncio.gather(*parts) for row in part]
    finally:
        for part in parts:
            _settle(part)


def _settle(future: asyncio.Future[Any]) -> None:
    """After a failed append the blobs are not needed: cancel their compression or consume its error."""
    if not future.done():
        future.cancel()
    elif not future.cancelled():
        future.exception()


RUN = "run.started"


def _label(event: StoredEvent) -> str:
    payload = event.decode().payload
    assert isinstance(payload, RunStarted)
    return payload.label
