"""The PostgreSQL backend (asyncpg): the same tables as SQLite, for many recorders on many machines.

Writers serialise on one transaction-scoped advisory lock, taken as the first statement of every write
transaction (sent with its BEGIN), so each append reads ``max(position)`` and its streams' heads and commits
before the next writer reads them: ``seq`` and ``position`` stay gap-free and positions appear in commit order,
as with SQLite's ``BEGIN IMMEDIATE`` (docs/design/postgres.md has the measurement against the alternative).
A writer that trusts the end of the log it last committed skips those reads, and a small batch then goes in
as one statement that takes the lock itself; rows that collide with another writer's newer ones are refused
by the primary key or ``(stream, seq)`` and the append is done again from a fresh read (``_log_end.py``).
Triggers refuse UPDATE, DELETE and TRUNCATE on ``events``, ``segments`` and ``blobs`` (but the DELETE of an event row
a segment holds: compaction; ``_postgres_schema.py``).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
from sqlalchemy import text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.exc import ArgumentError, DBAPIError
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.sql import ClauseElement
from sqlalchemy.util import greenlet_spawn
from sqlmodel import SQLModel

from p2w_runtime.store._core import EVENTS
from p2w_runtime.store._event_store import IntegrityError, ReadOnlyStore, StoreError, StoreUnavailable
from p2w_runtime.store._location import shown_url
from p2w_runtime.store._log_end import LogMoved
from p2w_runtime.store._postgres_schema import APPEND_ONLY, COLUMNS, TRIGGERS, bytewise_streams, foreign
from p2w_runtime.store._postgres_url import Connecting, connecting
from p2w_runtime.store._sql import SqlEventStore, _Read
from p2w_runtime.store._sql_base import Session
from p2w_runtime.store._sql_pages import Order

WRITE_LOCK = 0x7032_772D_7274  # "p2w-rt": the advisory lock every write transaction of this store takes
SCHEMA_LOCK = WRITE_LOCK + 1
"""Held while creating tables: several workers starting at once would otherwise race CREATE TABLE."""

COPY_ROWS = 64
"""Event batches at least this large go in by binary COPY (measured in docs/design/postgres.md)."""
IDLE_IN_TRANSACTION_S = float(os.environ.get("P2W_PG_IDLE_IN_TRANSACTION_S", "30"))
"""A session idle this long inside a transaction is ended by the server, its locks released: a frozen or cut-off
client cannot hold the write lock (or a run's label) for longer. Ours never idle that long: a transaction's
statements follow each other at once. Env ``P2W_PG_IDLE_IN_TRANSACTION_S`` (tests shorten it)."""


def session_settings() -> dict[str, str]:
    """What every connection asks of its server session, so that a client that is gone (killed, frozen, its
    machine unplugged) releases what it holds in seconds, not when TCP gives up hours later
    (docs/design/postgres.md, "A worker that dies or stops"). No ``lock_timeout`` or ``statement_timeout``: a
    writer waiting for the lock waits for a live holder, and the holder's side is what these bound."""
    return {
        "idle_in_transaction_session_timeout": str(round(IDLE_IN_TRANSACTION_S * 1000)),
        "client_connection_check_interval": "2000",  # a backend busy on a query checks its client every 2 s
        "tcp_keepalives_idle": "10",
        "tcp_keepalives_interval": "5",
        "tcp_keepalives_count": "3",
        "application_name": f"p2w-rt/{os.getpid()}",
    }


_EVENT_TABLE_COLUMNS = [column.name for column in EVENTS.columns]
"""In the order ``event_to_row`` gives the values."""
_LOG_END_KEYS = frozenset({"events_pkey", "uq_events_stream_seq"})
"""The constraints an append collides with when another writer appended after this writer's last look."""


_CLIENT_SIDE = (asyncpg.InterfaceError, asyncpg.InternalClientError, OSError)
"""Errors raised by the driver rather than reported by the server: the connection is not reused after one."""
_SERVER_GONE = (
    OSError,
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.AdminShutdownError,
    asyncpg.exceptions.CrashShutdownError,
    asyncpg.exceptions.CannotConnectNowError,
)
"""The server cannot be reached, is shutting down, crashed, or is still recovering: ``StoreUnavailable``."""
_READ_ONLY = (asyncpg.InsufficientPrivilegeError, asyncpg.ReadOnlySQLTransactionError)
"""A role granted SELECT only, a standby, ``default_transaction_read_only``: ``ReadOnlyStore``, so what only reads
(and would keep its read models or a verify mark) still works, as on a read-only SQLite file."""
_BEGIN_LOCKED = f"BEGIN; SELECT pg_advisory_xact_lock({WRITE_LOCK})"
"""A write transaction's start in one round trip: a simple query of two statements (the transaction stays open)."""


async def _rollback(conn: asyncpg.Connection) -> None:
    """End a failed (or cancelled) write transaction; a connection that cannot is closed, never reused mid-transaction.

    What asyncpg's ``transaction()`` does on an error, plus the close. asyncpg waits for a cancelled statement to
    finish before it sends the ROLLBACK. A failed ROLLBACK is not reported: the error that ended the transaction is.
    """
    try:
        await conn.execute("ROLLBACK")
    except Exception:
        conn.terminate()
    except BaseException:
        conn.terminate()
        raise


class _AsyncpgSession(Session):
    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn = conn

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return [tuple(row) for row in await self._conn.fetch(sql, *params)]

    async def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        await self._conn.executemany(sql, rows)

    async def insert_events(self, sql: str, rows: Iterable[Sequence[Any]], count: int) -> None:
        """Binary COPY for a large batch: the same constraints and triggers fire, with fewer bytes and no per-row
        statement. asyncpg consumes ``rows`` as it sends them (512 KB at a time), so the server inserts the first
        rows while the next are sealed; an error raised by ``rows`` aborts the COPY (CopyFail)."""
        try:
            if count < COPY_ROWS:
                await self._conn.executemany(sql, list(rows))
            else:
                await self._conn.copy_records_to_table("events", records=rows, columns=_EVENT_TABLE_COLUMNS)
        except asyncpg.UniqueViolationError as exc:
            if exc.constraint_name in _LOG_END_KEYS:  # positions or a stream's seqs are taken: another writer's
                raise LogMoved(str(exc)) from exc
            raise


class PostgresEventStore(SqlEventStore):
    """PostgreSQL through asyncpg. Writers take one advisory lock; readers never wait (MVCC)."""

    optimistic_appends = True
    alone_rows = COPY_ROWS

    def __init__(self, engine: Any, label: str, *, read_only: bool, connects: Connecting) -> None:
        super().__init__(engine, label)
        self.read_only = read_only
        self.connects = connects
        self.bytewise_streams = True
        """Whether stream names compare byte-wise in SQL, as in Python (``_postgres_schema.bytewise_streams``)."""
        typed = ", ".join(f"${i}::{c.type.compile(dialect=engine.dialect)}" for i, c in enumerate(EVENTS.columns, 1))
        columns = ", ".join(_EVENT_TABLE_COLUMNS)
        self._insert_locking = f"INSERT INTO events ({columns}) SELECT {typed} FROM pg_advisory_xact_lock({WRITE_LOCK})"
        """An events insert that takes the write lock first (again, for the rows after the first: it is re-entrant)."""

    async def _insert_alone(self, rows: list[tuple[Any, ...]]) -> None:
        """One ``executemany`` without BEGIN or COMMIT: asyncpg sends every row's execution, then one Sync, so they run
        in one implicit transaction, all or nothing, the lock held from the first row to the commit at Sync. One round
        trip where a transaction takes three (docs/design/postgres.md, third round)."""
        if self.read_only:
            raise ReadOnlyStore(f"{self.label}: opened read-only")
        async with self._driver() as conn:
            await _AsyncpgSession(conn).insert_events(self._insert_locking, rows, len(rows))

    @asynccontextmanager
    async def _driver(self) -> AsyncIterator[asyncpg.Connection]:
        try:
            pooled = await self.engine.raw_connection()  # half the cost of connect() + get_raw_connection()
            driver = pooled.driver_connection
            assert driver is not None  # an open pooled connection always has one
            broken = False
            try:
                yield driver
            except _CLIENT_SIDE as exc:  # the connection's state is unknown (a backend killed under it, say)
                broken = True
                raise StoreUnavailable(f"{self.label}: database connection lost ({type(exc).__name__}: {exc})") from exc
            finally:  # back to the pool (which may close it: async); a broken or closed one is dropped from it
                await greenlet_spawn(pooled.invalidate if broken or driver.is_closed() else pooled.close)
        except asyncpg.IntegrityConstraintViolationError as exc:
            raise IntegrityError(str(exc)) from exc
        except _READ_ONLY as exc:
            raise ReadOnlyStore(f"{self.label}: {exc}") from exc
        except TimeoutError as exc:  # opening a connection: one lost later is StoreUnavailable already
            raise self.connects.no_answer(self.label) from exc
        except _SERVER_GONE as exc:
            raise StoreUnavailable(f"{self.label}: database unavailable ({type(exc).__name__}: {exc})") from exc
        except DBAPIError as exc:  # a connection the pool could not open: the driver's error inside
            cause = exc.orig if isinstance(exc.orig, _SERVER_GONE) else None
            if isinstance(cause, TimeoutError):
                raise self.connects.no_answer(self.label) from exc
            if cause is not None:
                raise StoreUnavailable(f"{self.label}: database unavailable ({type(cause).__name__}: {cause})") from exc
            raise StoreError(f"{self.label}: database error ({exc})") from exc
        except (asyncpg.PostgresError, OSError) as exc:
            raise StoreError(f"{self.label}: database error ({exc})") from exc

    @asynccontextmanager
    async def _writing(self) -> AsyncIterator[Session]:
        if self.read_only:
            raise ReadOnlyStore(f"{self.label}: opened read-only")
        async with self._driver() as conn:
            try:
                await conn.execute(_BEGIN_LOCKED)
                yield _AsyncpgSession(conn)
            except BaseException:
                await _rollback(conn)
                raise
            await conn.execute("COMMIT")

    @asynccontextmanager
    async def _claiming(self) -> AsyncIterator[Session]:
        """No BEGIN / COMMIT: every work-queue operation is one statement (or one atomic ``executemany``), its own
        transaction, one round trip."""
        if self.read_only:
            raise ReadOnlyStore(f"{self.label}: opened read-only")
        async with self._driver() as conn:
            yield _AsyncpgSession(conn)

    @asynccontextmanager
    async def _reading(self) -> AsyncIterator[Session]:
        async with self._driver() as conn:
            yield _AsyncpgSession(conn)

    async def _of_streams(
        self,
        name: str,
        streams: Sequence[str],
        order: Order,
        make: Callable[[tuple[Any, ...]], _Read],
        make_segment: Callable[[tuple[Any, ...]], list[_Read]],
    ) -> AsyncIterator[_Read]:
        """Streams whose names compare by the database's locale (``bytewise_streams``) one per query: within one
        stream a page is keyed by seq alone, so SQL's order and Python's agree whatever the collation."""
        chunks = [streams] if self.bytewise_streams else [[stream] for stream in sorted(set(streams))]
        for chunk in chunks:
            async for item in super()._of_streams(name, chunk, order, make, make_segment):
                yield item

    @staticmethod
    def _insert_ignoring_duplicates(table: Any) -> ClauseElement:
        return pg_insert(table).on_conflict_do_nothing()


async def open_postgres(url: str, *, create: bool = True, read_only: bool = False) -> PostgresEventStore:
    """Open a PostgreSQL event store; the tables and triggers are created when missing (unless ``read_only``).

    ``create=False`` refuses a database without the event tables instead of initialising it.
    """
    label = shown_url(url)
    try:
        connects = connecting(url, label)
        engine = create_async_engine(
            "postgresql+asyncpg://",
            pool_size=8,
            max_overflow=8,
            pool_pre_ping=False,
            async_creator=connects.creator(session_settings()),
        )
    except (ArgumentError, ValueError) as exc:  # their text may quote the URL, or a piece of an unescaped password
        why = "is the port a number, every @ : / ? # of the password %-escaped?"
        raise StoreError(f"{label}: not a usable PostgreSQL URL ({why})") from exc
    store = PostgresEventStore(engine, label, read_only=read_only, connects=connects)
    try:
        async with engine.begin() as conn:
            present = {
                r[0]
                for r in await conn.execute(text("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"))
            }
            ours = present & {"events", "blobs"}
            if ours != {"events", "blobs"} and (ours or read_only or not create):
                why = "a partial p2w-rt event store" if ours else "no p2w-rt event store here"
                raise StoreError(f"{label}: {why} (record or import a run first)")
            store.has_segments = not read_only or "segments" in present  # a writer adds the table below
            triggers = {r[0] for r in await conn.execute(text("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal"))}
            if not read_only and not (present >= set(SQLModel.metadata.tables) and triggers >= TRIGGERS):
                if ours and foreign({(r[0], r[1]) for r in await conn.execute(text(COLUMNS))}):
                    raise StoreError(f"{label}: its tables events and blobs are another tool's: left untouched")
                await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": SCHEMA_LOCK})
                await conn.run_sync(SQLModel.metadata.create_all)
                for ddl in APPEND_ONLY:
                    await conn.execute(text(ddl))
            store.bytewise_streams = await bytewise_streams(conn, change=not read_only, lock=SCHEMA_LOCK)
    except StoreError:
        await engine.dispose()
        raise
    except (asyncpg.PostgresError, OSError, DBAPIError) as exc:
        await engine.dispose()
        cause = getattr(exc, "orig", None) or exc
        if isinstance(cause, TimeoutError):
            raise connects.no_answer(label) from exc
        raise StoreError(f"{label}: cannot open ({type(cause).__name__}: {cause})") from exc
    return store
