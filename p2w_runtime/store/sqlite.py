"""The embedded SQLite backend: opening a file, reading connections (aiosqlite), setting a file up. The file's checks
and each connection's set-up (WAL, busy timeout) are in ``_sqlite_file.py``, what it adds to the tables in
``_sqlite_schema.py``, its writer in ``_sqlite_writer.py``.

Opening a store that is already set up, and reading it with the statements compiled ahead
(``sqlite_statements.json``), imports no SQLAlchemy: a listing (``runs``, ``show RUN``) never does. The engine,
SQLAlchemy and the SQLModel tables load when a store must be set up (``create_all``) or a statement is first
compiled (docs/design/startup.md, fourth round).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiosqlite

from p2w_rt.schemas import NewEvent, StoredEvent
from p2w_runtime.store._event_store import IntegrityError, StoreError
from p2w_runtime.store._sql import SqlEventStore
from p2w_runtime.store._sql_base import Session
from p2w_runtime.store._sqlite_file import check_sqlite_file, make_engine, opened_as, prepare, writable
from p2w_runtime.store._sqlite_schema import (
    BACKFILL_LABELS,
    INDEXES,
    indexes_current,
    may_become_ours,
    missing_triggers,
)
from p2w_runtime.store._sqlite_statements import STATEMENTS, TABLES
from p2w_runtime.store._sqlite_writer import (
    BUSY_TIMEOUT_MS,
    SqliteWriter,
    WouldWait,
    WriteTransaction,
    database_problem,
    unreadable,
)

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine
    from sqlalchemy.sql import ClauseElement


class _AiosqliteSession(Session):
    """One aiosqlite call per statement: each is a single hand-off to the connection's thread."""

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return list(await self._conn.execute_fetchall(sql, params))  # type: ignore[arg-type]  # aiosqlite's stub wants Iterable|dict

    async def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        await self._conn.executemany(sql, rows)


class SqliteEventStore(SqlEventStore):
    """SQLite through aiosqlite for reads; writes on one ``sqlite3`` connection of this store's own (see
    ``SqliteWriter``). Writers serialise on BEGIN IMMEDIATE; readers never block them (WAL).

    Reading connections are kept for the next reader (``_driver``), as an engine's pool would keep them; the
    SQLAlchemy engine itself is made only when something needs it (``engine``)."""

    precompiled = STATEMENTS

    def __init__(self, label: str, *, path: Path, read_only: bool, create: bool) -> None:
        super().__init__(None, label)
        self.read_only = read_only
        self._path = path
        self._create = create
        self._idle: list[aiosqlite.Connection] = []
        """Open reading connections no reader holds."""
        self._closed = False
        self._writer = SqliteWriter(path, label, read_only=read_only)

    @cached_property
    def engine(self) -> AsyncEngine:  # type: ignore[override]  # made on first use, not passed in
        """The SQLAlchemy engine: for setting the store up (``create_all``), and the dialect statements are compiled
        for. Reading and writing use the driver connections directly (``_driver``, ``SqliteWriter``)."""
        return make_engine(self._path, read_only=self.read_only, create=self._create)

    async def _connect(self) -> aiosqlite.Connection:
        """A reading connection, set up as the engine sets up each of its own (``prepare``)."""
        database, uri = opened_as(self._path, read_only=self.read_only)
        opening = aiosqlite.connect(database, uri=uri, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        # as SQLAlchemy's adapter does, for aiosqlite before 0.22 (a Thread) and after: an unclosed store never
        # holds the interpreter's exit up
        worker = opening if isinstance(opening, threading.Thread) else opening._thread
        worker.daemon = True
        conn = await opening
        try:  # on the connection's own thread, as the engine's "connect" listener runs
            await conn._execute(prepare, conn._conn, read_only=self.read_only, create=self._create)
        except BaseException:
            await conn.close()
            raise
        return conn

    @asynccontextmanager
    async def _driver(self) -> AsyncIterator[aiosqlite.Connection]:
        """A kept reading connection (or a new one); its driver errors become the store's. A connection that
        raised a driver error, or that comes back after the store closed, is closed, not kept: its driver thread
        must not outlive the event loop it answers to."""
        conn: aiosqlite.Connection | None = None
        try:
            conn = self._idle.pop() if self._idle else await self._connect()
            yield conn
        except sqlite3.IntegrityError as exc:
            raise IntegrityError(str(exc)) from exc
        except sqlite3.DatabaseError as exc:
            if conn is not None:
                await conn.close()
                conn = None
            error = unreadable(self.label, exc)
            if error is None:
                raise
            raise error from exc
        finally:
            if conn is not None and self._closed:
                await conn.close()
            elif conn is not None:
                self._idle.append(conn)

    def append_now(self, events: Sequence[NewEvent]) -> list[StoredEvent] | None:
        """``append`` run to its end right here, when it can be: this process's writer is idle and SQLite's lock is
        free on the first try. Without blobs to compress, ``append`` never suspends then (every statement is a
        plain ``sqlite3`` call on this thread), so its coroutine is driven by hand, without a task or a turn of the
        event loop. If it would wait, it stops before its transaction begins and None is returned: the writer raises
        ``WouldWait`` when SQLite's lock is taken, and a coroutine that suspends anyway (queued behind another task
        of this process for the writer) is closed where it waits."""
        if self.read_only or self._writer.busy:
            return None
        appending = self.append(events)
        self._writer.may_wait = False
        try:
            appending.send(None)
        except StopIteration as done:
            stored: list[StoredEvent] = done.value
            return stored
        except WouldWait:
            return None
        finally:
            self._writer.may_wait = True
        appending.close()  # it suspended before its transaction (this process's queue for the writer): nothing written
        return None

    def _writing(self) -> WriteTransaction:
        return self._writer.transaction()

    async def close(self) -> None:
        self._closed = True
        self._writer.close()
        idle, self._idle = self._idle, []
        for conn in idle:
            await conn.close()
        if "engine" in vars(self):
            await self.engine.dispose()

    @asynccontextmanager
    async def _reading(self) -> AsyncIterator[Session]:
        async with self._driver() as conn:
            yield _AiosqliteSession(conn)

    @staticmethod
    def _insert_ignoring_duplicates(table: Any) -> ClauseElement:
        from sqlalchemy.dialects.sqlite import insert

        return insert(table).on_conflict_do_nothing()

    async def _ready(self) -> bool:
        """Whether the file is a store that needs nothing created or changed (every table, trigger and index as
        ``_set_up`` would leave them), read on a reading connection without SQLAlchemy. A file that is no store of ours
        is refused."""
        async with self._reading() as session:
            rows = await session.fetch(
                "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'trigger', 'index')"
            )
        tables = {name for kind, name in rows if kind == "table"}
        if not may_become_ours(tables, create=self._create and not self.read_only):
            if not tables:  # what a first write killed before its set-up leaves: not someone else's file
                raise StoreError(f"{self.label}: a SQLite database with no tables yet: nothing recorded in it")
            raise StoreError(f"{self.label}: a SQLite database, but not a p2w-rt event store")
        self.has_segments = not self.read_only or "segments" in tables  # a writer adds the table (``_set_up``)
        triggers = {name for kind, name in rows if kind == "trigger"}
        indexes = {name for kind, name in rows if kind == "index"}
        return self.read_only or (tables >= TABLES and not missing_triggers(triggers) and indexes_current(indexes))

    async def _set_up(self) -> None:
        """Create what is missing (tables, triggers, the type index, the labels of a database older than them) in one
        transaction that holds the write lock, through the engine: two processes setting up one new file do it
        once."""
        from sqlalchemy import text

        from p2w_runtime.store._core import EVENTS  # the tables, declared on their metadata

        async with self.engine.connect() as conn:
            await conn.execution_options(p2w_immediate=True)
            async with conn.begin():
                tables = {r[0] for r in await conn.execute(text("SELECT name FROM sqlite_master WHERE type='table'"))}
                if not may_become_ours(tables, create=self._create):
                    raise StoreError(f"{self.label}: a SQLite database, but not a p2w-rt event store")
                await conn.run_sync(EVENTS.metadata.create_all)
                triggers = {
                    r[0] for r in await conn.execute(text("SELECT name FROM sqlite_master WHERE type='trigger'"))
                }
                for ddl in [*missing_triggers(triggers), *INDEXES]:  # IF [NOT] EXISTS: no write when in place
                    await conn.execute(text(ddl))
                if "run_labels" not in tables:
                    await conn.execute(text(BACKFILL_LABELS))


async def open_sqlite(path: str | Path, *, create: bool = True, read_only: bool = False) -> SqliteEventStore:
    """Open (and, if ``create``, initialise) a SQLite event store, checking the file first.

    ``read_only`` (or an existing file this process cannot write) opens it with SQLite's ``mode=ro``: nothing
    is created, migrated or switched to WAL, and any write raises ``ReadOnlyStore``. A store with every table and
    trigger in place opens without SQLAlchemy (``_ready``); anything missing is created through it (``_set_up``).
    """
    path = Path(path)
    check_sqlite_file(path, create=create)
    read_only = read_only or (path.exists() and path.stat().st_size > 0 and not writable(path))
    store = SqliteEventStore(str(path), path=path, read_only=read_only, create=create)
    try:
        if not await store._ready():
            await store._set_up()
    except StoreError:
        await store.close()
        raise
    except Exception as exc:
        await store.close()
        cause = getattr(exc, "orig", exc)
        if isinstance(cause, sqlite3.DatabaseError) or isinstance(exc, sqlite3.DatabaseError):
            raise database_problem(path, cause) from exc
        raise
    return store
