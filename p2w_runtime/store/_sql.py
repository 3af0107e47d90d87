"""The part of the recorder every SQL backend shares: sealing, chain checks, paging.

Statements are SQLAlchemy Core over the SQLModel tables, compiled once for the backend's dialect; the
hot paths (append, import, reading pages) run them on the driver connection through a ``Session``, one
driver call per statement. Going through SQLAlchemy's async adaptation costs three to four thread
hand-offs per statement, which made a five-event append several times slower (docs/design/store.md,
"Third round").
"""

from __future__ import annotations

import asyncio
import os
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import BindParameter, Dialect, Select, and_, bindparam, delete, func, insert, or_, select
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.compiler import SQLCompiler

from p2w_runtime.redaction import seal_redacted
from p2w_runtime.store._claims import ClaimHolder
from p2w_runtime.store._recorder import IntegrityError, LabelTaken, Recorder, StreamHead
from p2w_runtime.store._rows import (
    BLOBS,
    CLAIMS,
    EVENT_COLUMNS,
    EVENTS,
    RUN_LABELS,
    compress_blobs,
    decompress_blob,
    event_to_row,
    row_to_event,
)
from schemas import GENESIS_HASH, NewEvent, RunStarted, StoredEvent

PAGE_SIZE = 1000
"""Rows fetched per query when streaming; bounds reader memory whatever the run size."""
STREAMS_PAGE = 5
"""``read_streams`` fetches this many times ``PAGE_SIZE`` rows per query: it reads whole runs, and each page has
a fixed cost besides its rows (docs/design/projection.md)."""
_STREAM, _SEQ, _POSITION = ([c.name for c in EVENT_COLUMNS].index(name) for name in ("stream", "seq", "position"))
"""Where a selected row holds the key the next page starts after."""
BLOBS_PER_THREAD = 16
"""A batch with fewer blobs is compressed on one worker thread; a thread hand-off costs more than it saves."""
COMPRESSION_THREADS = os.cpu_count() or 1
ID_CHUNK = 500
"""Values per ``IN (...)`` list: well under every backend's bound-parameter limit."""


class Session(ABC):
    """One driver connection, as the hot paths use it."""

    @abstractmethod
    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement and return all its rows."""

    @abstractmethod
    async def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement once per row of values."""


@dataclass(frozen=True, slots=True)
class Compiled:
    """A Core statement compiled for one dialect: its SQL text and how to order its parameters."""

    sql: str
    names: tuple[str, ...]
    defaults: dict[str, Any]

    @classmethod
    def of(cls, statement: ClauseElement, dialect: Dialect) -> Compiled:
        compiled = statement.compile(dialect=dialect, compile_kwargs={"render_postcompile": True})
        assert isinstance(compiled, SQLCompiler)  # statements, not DDL: they carry positional parameter order
        return cls(str(compiled), tuple(compiled.positiontup or ()), dict(compiled.params))

    def params(self, **values: Any) -> tuple[Any, ...]:
        return tuple(values[n] if n in values else self.defaults[n] for n in self.names)


class SqlRecorder(Recorder):
    """Recorder logic over a SQLAlchemy async engine; backends supply sessions and the blob upsert."""

    def __init__(self, engine: AsyncEngine, label: str) -> None:
        self.engine = engine
        self.label = label
        dialect = engine.dialect
        self._max_position = Compiled.of(select(func.max(EVENTS.c.position)), dialect)
        self._head_sql = Compiled.of(
            select(EVENTS.c.seq, EVENTS.c.hash, EVENTS.c.type)
            .where(EVENTS.c.stream == bindparam("stream"))
            .order_by(EVENTS.c.seq.desc())
            .limit(1),
            dialect,
        )
        self._event_sql = Compiled.of(
            select(*EVENT_COLUMNS).where(EVENTS.c.stream == bindparam("stream"), EVENTS.c.seq == bindparam("seq")),
            dialect,
        )
        self._blob_sql = Compiled.of(
            select(BLOBS.c.codec, BLOBS.c.data).where(BLOBS.c.sha256 == bindparam("sha256")), dialect
        )
        self._insert_events = Compiled.of(insert(EVENTS), dialect).sql
        self._insert_blobs = Compiled.of(self._insert_ignoring_duplicates(BLOBS), dialect).sql
        self._insert_label = Compiled.of(self._insert_ignoring_duplicates(RUN_LABELS), dialect).sql
        self._label_holder = Compiled.of(
            select(RUN_LABELS.c.run_id).where(RUN_LABELS.c.label == bindparam("label")), dialect
        )
        self._stored_blobs: set[str] = set()
        """Blob hashes known to be committed: blobs are never deleted, so these need no compressing again."""

    # -- backend hooks -------------------------------------------------------------------------
    @abstractmethod
    def _writing(self) -> AbstractAsyncContextManager[Session]:
        """A session inside a transaction that holds the write lock from its start; committed on a clean exit.

        Driver errors leave it as ``IntegrityError`` (a constraint refused the write) or ``StoreError``.
        """

    @abstractmethod
    def _reading(self) -> AbstractAsyncContextManager[Session]:
        """A session for a few reads; driver errors leave it as ``StoreError``."""

    @abstractmethod
    def _insert_ignoring_duplicates(self, table: Any) -> ClauseElement:
        """An insert into ``table`` that skips a row whose primary key is already stored (a blob's hash, a label)."""

    # -- writing -------------------------------------------------------------------------------
    async def append(self, events: Sequence[NewEvent], blobs: Mapping[str, bytes] | None = None) -> list[StoredEvent]:
        if not events and not blobs:
            return []
        blobs = blobs or {}
        sealed: list[StoredEvent] = []

        async def seal(session: Session) -> list[tuple[Any, ...]]:
            await self._check_blobs_present(session, events, set(blobs))
            position, heads = await self._position(session), _Heads(self, session)
            rows = []
            for new in events:
                seq, prev = await heads.get(new.stream)
                position += 1
                stored = seal_redacted(new, seq=seq + 1, prev_hash=prev, position=position)
                heads.advance(stored)
                sealed.append(stored)
                rows.append(event_to_row(stored, position))
            labels = [(p.label, new.stream) for new in events if isinstance(p := new.payload, RunStarted)]
            await self._hold_labels(session, labels)
            return rows

        await self._write(blobs, seal, refused="append refused")
        return sealed

    async def append_stored(self, events: Sequence[StoredEvent], blobs: Mapping[str, bytes] | None = None) -> int:
        blobs = blobs or {}

        async def check(session: Session) -> list[tuple[Any, ...]]:
            existing = await self._stored_hashes(session, [e.event_id for e in events])
            for event in events:
                if existing.get(event.event_id, event.hash) != event.hash:
                    raise IntegrityError(
                        f"event {event.event_id} (stream {event.stream}, seq {event.seq}) is already stored "
                        f"with different content"
                    )
            fresh = [e for e in events if e.event_id not in existing]
            await self._check_blobs_present(session, fresh, set(blobs))
            position, heads = await self._position(session), _Heads(self, session)
            rows = []
            for event in fresh:
                seq, prev = await heads.get(event.stream)
                if event.seq != seq + 1 or event.prev_hash != prev or event.compute_hash() != event.hash:
                    raise IntegrityError(
                        f"event {event.event_id} (stream {event.stream}, seq {event.seq}) does not continue "
                        f"the stream's hash chain"
                    )
                heads.advance(event)
                position += 1
                rows.append(event_to_row(event, position))
            await self._hold_labels(session, [(_label(e), e.stream) for e in fresh if e.type == RUN])
            return rows

        return await self._write(blobs, check, refused="import refused")

    async def _write(
        self,
        blobs: Mapping[str, bytes],
        event_rows: Callable[[Session], Awaitable[list[tuple[Any, ...]]]],
        *,
        refused: str,
    ) -> int:
        """One write transaction: ``event_rows`` builds the rows under the lock, the blobs go in beside them.

        The blobs are hash-checked and compressed in worker threads meanwhile. Returns the number of events.
        """
        compressing = self._compress(blobs)
        try:
            async with self._writing() as session:
                rows = await event_rows(session)
                if compressing is not None:
                    blob_rows = await compressing
                    if blob_rows:
                        await session.execute_many(self._insert_blobs, blob_rows)
                if rows:
                    await session.execute_many(self._insert_events, rows)
        except LabelTaken:
            raise
        except IntegrityError as exc:
            raise IntegrityError(f"{refused} by {self.label}: {exc}") from exc
        finally:
            if compressing is not None:
                _settle(compressing)
        self._stored_blobs.update(blobs)
        return len(rows)

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

    async def _position(self, session: Session) -> int:
        return (await session.fetch(self._max_position.sql))[0][0] or 0

    async def _stored_hashes(self, session: Session, event_ids: list[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        for i in range(0, len(event_ids), ID_CHUNK):
            query = select(EVENTS.c.event_id, EVENTS.c.hash).where(EVENTS.c.event_id.in_(event_ids[i : i + ID_CHUNK]))
            found.update(await self._fetch_once(session, query))
        return found

    async def _check_blobs_present(self, session: Session, events: Sequence[Any], given: set[str]) -> None:
        wanted = sorted({h for e in events for h in _referenced_blobs(e)} - given - self._stored_blobs)
        present: set[str] = set()
        for i in range(0, len(wanted), ID_CHUNK):
            query = select(BLOBS.c.sha256).where(BLOBS.c.sha256.in_(wanted[i : i + ID_CHUNK]))
            present.update(row[0] for row in await self._fetch_once(session, query))
        missing = set(wanted) - present
        if missing:
            raise IntegrityError(f"events reference blobs that are not stored: {', '.join(sorted(missing))[:200]}")
        self._stored_blobs.update(present)

    async def _fetch_once(self, session: Session, statement: ClauseElement) -> list[tuple[Any, ...]]:
        """Run a statement whose values are part of it (an ``IN`` list): compiled for this one call."""
        compiled = Compiled.of(statement, self.engine.dialect)
        return await session.fetch(compiled.sql, compiled.params())

    # -- reading -------------------------------------------------------------------------------
    async def _head(self, session: Session, stream: str) -> StreamHead | None:
        rows = await session.fetch(self._head_sql.sql, self._head_sql.params(stream=stream))
        return StreamHead(stream, *rows[0]) if rows else None

    async def stream_head(self, stream: str) -> StreamHead | None:
        async with self._reading() as session:
            return await self._head(session, stream)

    async def read_event(self, stream: str, seq: int) -> StoredEvent | None:
        async with self._reading() as session:
            rows = await session.fetch(self._event_sql.sql, self._event_sql.params(stream=stream, seq=seq))
        return row_to_event(rows[0]) if rows else None

    def read_stream(self, stream: str, *, after_seq: int = 0) -> AsyncIterator[StoredEvent]:
        page = (
            select(*EVENT_COLUMNS)
            .where(EVENTS.c.stream == stream, EVENTS.c.seq > bindparam("after", value=0))
            .order_by(EVENTS.c.seq)
        )
        return self._pages(page, after_seq, _SEQ)

    def read_streams(self, streams: Sequence[str]) -> AsyncIterator[StoredEvent]:
        """Up to ``ID_CHUNK`` streams per query, paged on (stream, seq) with ``STREAMS_PAGE`` pages: reading a
        run's episodes one query each cost more than decoding them (docs/design/projection.md)."""
        names = sorted(set(streams))
        after_stream: BindParameter[str] = bindparam("after_stream", value="")
        after: BindParameter[int] = bindparam("after", value=0)
        size = PAGE_SIZE * STREAMS_PAGE
        pages = [
            Compiled.of(
                select(*EVENT_COLUMNS)
                .where(
                    EVENTS.c.stream.in_(names[i : i + ID_CHUNK]),
                    # not the row value (stream, seq) > (?, ?): SQLite then rescans the streams before it
                    or_(after_stream < EVENTS.c.stream, and_(after_stream == EVENTS.c.stream, EVENTS.c.seq > after)),
                )
                .order_by(EVENTS.c.stream, EVENTS.c.seq)
                .limit(size),
                self.engine.dialect,
            )
            for i in range(0, len(names), ID_CHUNK)
        ]
        return self._paged(pages, size, {}, lambda row: {"after_stream": row[_STREAM], "after": row[_SEQ]})

    def read_all(
        self, *, after_position: int = 0, stream_prefix: str | None = None, types: Sequence[str] | None = None
    ) -> AsyncIterator[StoredEvent]:
        page = select(*EVENT_COLUMNS).where(EVENTS.c.position > bindparam("after", value=0))
        if stream_prefix is not None:
            page = page.where(EVENTS.c.stream.startswith(stream_prefix, autoescape=True))
        if types:
            page = page.where(EVENTS.c.type.in_(list(types)))
        return self._pages(page.order_by(EVENTS.c.position), after_position, _POSITION)

    def _pages(self, query: Select[Any], after: int, key: int) -> AsyncIterator[StoredEvent]:
        """Events of ``query`` after the key ``after`` (the value at index ``key`` of a selected row), paged."""
        page = Compiled.of(query.limit(PAGE_SIZE), self.engine.dialect)
        return self._paged([page], PAGE_SIZE, {"after": after}, lambda row: {"after": row[key]})

    async def _paged(
        self,
        pages: Sequence[Compiled],
        size: int,
        after: dict[str, Any],
        next_after: Callable[[tuple[Any, ...]], dict[str, Any]],
    ) -> AsyncIterator[StoredEvent]:
        """The events of each statement of ``pages`` in turn, ``size`` rows at a time, each page one short read (a
        slow consumer never holds a snapshot open); a page starts after the keys ``next_after`` takes from the
        last row of the one before, the first after ``after``.

        The next page is fetched while this one is handed out, so the driver's thread reads while this one
        builds events (docs/design/store.md, "Third round").
        """
        for page in pages:
            fetching: asyncio.Task[list[tuple[Any, ...]]] | None = asyncio.create_task(self._fetch_page(page, after))
            try:
                while fetching is not None:
                    rows = await fetching
                    fetching = None
                    if len(rows) == size:
                        fetching = asyncio.create_task(self._fetch_page(page, next_after(rows[-1])))
                        await asyncio.sleep(0)  # let it reach the driver's thread before this page is handed out
                    for row in rows:
                        yield row_to_event(row)
            finally:
                if fetching is not None:
                    fetching.cancel()

    async def _fetch_page(self, page: Compiled, after: dict[str, Any]) -> list[tuple[Any, ...]]:
        async with self._reading() as session:
            return await session.fetch(page.sql, page.params(**after))

    async def list_streams(self, prefix: str | None = None) -> list[StreamHead]:
        heads = select(EVENTS.c.stream, func.max(EVENTS.c.seq).label("seq")).group_by(EVENTS.c.stream)
        if prefix is not None:
            heads = heads.where(EVENTS.c.stream.startswith(prefix, autoescape=True))
        last = heads.subquery()
        query = (
            select(EVENTS.c.stream, EVENTS.c.seq, EVENTS.c.hash, EVENTS.c.type)
            .join(last, (EVENTS.c.stream == last.c.stream) & (EVENTS.c.seq == last.c.seq))
            .order_by(EVENTS.c.stream)
        )
        async with self._reading() as session:
            return [StreamHead(*row) for row in await self._fetch_once(session, query)]

    async def get_blob(self, sha256: str) -> bytes:
        async with self._reading() as session:
            rows = await session.fetch(self._blob_sql.sql, self._blob_sql.params(sha256=sha256))
        if not rows:
            raise KeyError(sha256)
        return decompress_blob(sha256, *rows[0])

    async def blob_hashes(self) -> AsyncIterator[str]:
        page = Compiled.of(
            select(BLOBS.c.sha256)
            .where(BLOBS.c.sha256 > bindparam("after", value=""))
            .order_by(BLOBS.c.sha256)
            .limit(PAGE_SIZE),
            self.engine.dialect,
        )
        after = ""
        while True:
            async with self._reading() as session:
                rows = await session.fetch(page.sql, page.params(after=after))
            for row in rows:
                yield row[0]
            if len(rows) < PAGE_SIZE:
                return
            after = rows[-1][0]

    async def count(self) -> tuple[int, int]:
        events = select(func.count()).select_from(EVENTS).scalar_subquery()
        blobs = select(func.count()).select_from(BLOBS).scalar_subquery()
        async with self._reading() as session:
            ((n_events, n_blobs),) = await self._fetch_once(session, select(events, blobs))
        return n_events, n_blobs

    # -- claims --------------------------------------------------------------------------------
    async def try_claim(self, key: str, me: ClaimHolder) -> ClaimHolder | None:
        holder_of = select(CLAIMS.c.owner, CLAIMS.c.host, CLAIMS.c.pid, CLAIMS.c.claimed_at).where(CLAIMS.c.key == key)
        async with self._writing() as session:
            rows = await self._fetch_once(session, holder_of)
            if rows:
                holder = ClaimHolder(*rows[0])
                if holder.owner == me.owner:
                    return None
                if not holder.is_stale(time.time()):
                    return holder
                await self._fetch_once(session, delete(CLAIMS).where(CLAIMS.c.key == key))
            claim = dict(key=key, owner=me.owner, host=me.host, pid=me.pid, claimed_at=me.claimed_at)
            await self._fetch_once(session, insert(CLAIMS).values(**claim))
        return None

    async def release_claim(self, key: str, me: ClaimHolder) -> None:
        async with self._writing() as session:
            await self._fetch_once(session, delete(CLAIMS).where(CLAIMS.c.key == key, CLAIMS.c.owner == me.owner))

    async def close(self) -> None:
        await self.engine.dispose()


class _Heads:
    """Each stream's (last seq, last hash) during one append: read from the database once, then advanced."""

    def __init__(self, recorder: SqlRecorder, session: Session) -> None:
        self._recorder, self._session = recorder, session
        self._heads: dict[str, tuple[int, str]] = {}

    async def get(self, stream: str) -> tuple[int, str]:
        if stream not in self._heads:
            head = await self._recorder._head(self._session, stream)
            self._heads[stream] = (head.last_seq, head.last_hash) if head else (0, GENESIS_HASH)
        return self._heads[stream]

    def advance(self, event: StoredEvent) -> None:
        self._heads[event.stream] = (event.seq, event.hash)


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


def _referenced_blobs(event: NewEvent | StoredEvent) -> list[str]:
    if isinstance(event, StoredEvent):
        return event.blobs
    return event.payload.blob_hashes()
