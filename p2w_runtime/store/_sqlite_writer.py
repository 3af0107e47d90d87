"""The SQLite store's writing side: one ``sqlite3`` connection of its own, used on the event loop's thread.

In WAL mode, inside a transaction that holds the write lock (``BEGIN IMMEDIATE``), reads never wait and writes and
``COMMIT`` wait for nobody (``synchronous=NORMAL``: no fsync at commit), so each statement takes microseconds and no
thread hand-off is worth its cost. Waiting for the lock is what can take long, and that sleeps on the loop
(docs/design/store.md, "Appends on the loop's thread").
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from p2w_runtime.store._event_store import IntegrityError, ReadOnlyStore, StoreError
from p2w_runtime.store._sql_base import Session

BUSY_TIMEOUT_MS = 60_000

_OUR_BUGS = (sqlite3.IntegrityError, sqlite3.ProgrammingError, sqlite3.InterfaceError)
"""Driver errors that stay errors: refused appends (handled by the recorder) and malformed SQL."""


def unreadable(path: Path | str, cause: BaseException) -> StoreError | None:
    """A corrupt, locked or unwritable file is the user's to fix: one message naming it, no traceback."""
    if isinstance(cause, sqlite3.DatabaseError) and not isinstance(cause, _OUR_BUGS):
        return database_problem(path, cause)
    return None


def database_problem(path: Path | str, cause: BaseException) -> StoreError:
    """The one line for a driver error on the file at ``path``.

    A full disk is said as such: SQLite's own words ("database or disk is full") under "unreadable database" read
    as a damaged file, when the write that did not fit was rolled back and every committed event is intact.
    """
    if getattr(cause, "sqlite_errorname", None) == "SQLITE_FULL":
        return StoreError(
            f"{path}: the disk is full; the write that did not fit was undone and nothing already recorded was "
            "lost: free some space and run the command again"
        )
    return StoreError(f"{path}: unreadable database ({cause})")


class BusyBackoff:
    """SQLite's own busy handler's schedule, for a lock SQLite will not wait for itself: 1 ms growing to 25 ms between
    tries, up to the busy timeout. ``pause`` says how long to wait after a failed try, or re-raises what failed."""

    __slots__ = ("_deadline", "_pause")

    def __init__(self) -> None:
        self._deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        self._pause = 0.001

    def pause(self, failed: sqlite3.OperationalError) -> float:
        """Seconds to wait before trying again; ``failed`` raised when it is not a lock taken, or time is up."""
        if not is_busy(failed) or time.monotonic() >= self._deadline:
            raise failed
        pause, self._pause = self._pause, min(self._pause * 2, 0.025)
        return pause


def is_busy(failed: sqlite3.OperationalError) -> bool:
    """Whether ``failed`` says a lock is held by another connection."""
    return failed.sqlite_errorcode in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


class WouldWait(Exception):
    """Raised instead of waiting for SQLite's lock while the writer may not wait (``may_wait``): nothing was begun."""


class SqliteWriter:
    """The connection, and this process's queue for it: one transaction at a time; other processes queue on the
    database's lock."""

    def __init__(self, path: Path, label: str, *, read_only: bool) -> None:
        self._path = path
        self.label = label
        self.read_only = read_only
        self._conn: sqlite3.Connection | None = None
        self.lock = asyncio.Lock()
        self.may_wait = True
        """False: a transaction that finds SQLite's lock taken raises ``WouldWait`` instead of sleeping
        (``SqliteEventStore.append_now``)."""

    @property
    def busy(self) -> bool:
        """Whether a transaction of this process holds the writer or waits for it."""
        return self.lock.locked()

    def transaction(self) -> WriteTransaction:
        return WriteTransaction(self)

    def connection(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA busy_timeout=0")  # never wait on the event loop's thread: begin() retries
            conn.execute("PRAGMA synchronous=NORMAL")
            self._conn = conn
        return self._conn

    async def begin(self, conn: sqlite3.Connection) -> None:
        """Take the write lock: at once when it is free (nearly always); else retry, sleeping on the event loop as
        SQLite's own busy handler sleeps (1 ms growing to 25 ms), until the busy timeout, while another writer
        (task or process) commits. Nothing is open while it sleeps, so a cancelled writer leaves nothing behind."""
        backoff = BusyBackoff()
        while True:
            try:
                conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if not self.may_wait and is_busy(exc):
                    raise WouldWait from exc
                pause = backoff.pause(exc)
            await asyncio.sleep(pause)

    def driver_error(self, conn: sqlite3.Connection, exc: sqlite3.DatabaseError) -> StoreError | None:
        """What a driver error in a write transaction becomes, after rolling the transaction back; None: re-raised
        as it is (a bug of ours)."""
        if conn.in_transaction:
            conn.rollback()
        if isinstance(exc, sqlite3.IntegrityError):
            return IntegrityError(str(exc))
        return unreadable(self.label, exc)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class WriterSession(Session):
    """The writer's connection as the SQL store's ``Session``: each statement a plain ``sqlite3`` call."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._conn.execute(sql, params).fetchall()

    async def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self._conn.executemany(sql, rows)

    async def insert_events(self, sql: str, rows: Iterable[Sequence[Any]], count: int) -> None:
        self._conn.executemany(sql, rows)  # consumes the sealing generator as it inserts


class WriteTransaction:
    """The store's write transaction: the writer, ``BEGIN IMMEDIATE``, then ``COMMIT`` on a clean exit and ``ROLLBACK``
    otherwise, driver errors as the store's. A class, not an ``asynccontextmanager``: that is an async generator per
    transaction, which the event loop registers and forgets, 2.4 % of a per-step append's samples
    (docs/design/store.md, "Appends, fourth round")."""

    __slots__ = ("_conn", "_writer")

    def __init__(self, writer: SqliteWriter) -> None:
        self._writer = writer

    async def __aenter__(self) -> Session:
        writer = self._writer
        if writer.read_only:
            raise ReadOnlyStore(f"{writer.label}: opened read-only (the file, its folder or its medium is read-only)")
        await writer.lock.acquire()
        try:
            self._conn = conn = writer.connection()
            try:
                await writer.begin(conn)
            except sqlite3.DatabaseError as exc:
                error = writer.driver_error(conn, exc)
                if error is None:
                    raise
                raise error from exc
        except BaseException:
            writer.lock.release()
            raise
        return WriterSession(conn)

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None, _tb: object) -> None:
        writer, conn = self._writer, self._conn
        try:
            if exc is None:
                try:
                    conn.commit()
                except sqlite3.DatabaseError as failed:
                    error = writer.driver_error(conn, failed)
                    if error is None:
                        raise
                    raise error from failed
            else:
                conn.rollback()
                if isinstance(exc, sqlite3.DatabaseError) and (error := writer.driver_error(conn, exc)) is not None:
                    raise error from exc
        finally:
            writer.lock.release()
