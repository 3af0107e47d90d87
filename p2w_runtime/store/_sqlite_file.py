"""The SQLite database file: checked before it is opened, how the driver opens it (read-only, immutable), and the
set-up of each connection (busy timeout, ``BEGIN`` issued by the store, WAL for a file that is ours)."""

from __future__ import annotations

import os
import sqlite3
import struct
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from p2w_runtime.store._event_store import StoreError
from p2w_runtime.store._sqlite_schema import may_become_ours
from p2w_runtime.store._sqlite_writer import BUSY_TIMEOUT_MS, BusyBackoff, unreadable

if TYPE_CHECKING:
    from sqlalchemy.engine import URL
    from sqlalchemy.ext.asyncio import AsyncEngine

SQLITE_MAGIC = b"SQLite format 3\x00"


def check_sqlite_file(path: Path, *, create: bool) -> None:
    """Refuse a file that is not a whole SQLite database before SQLAlchemy ever sees it.

    A missing file is created only when ``create``; a truncated or foreign file is an error
    either way, because opening it would fail later or silently start a new log. An empty file is
    accepted only when ``create``: it is what SQLite leaves between creating a database and writing
    its first page, so another process opening the same new database at that moment sees one.
    """
    if not path.exists():
        if create:
            if not path.parent.exists():
                raise StoreError(f"{path}: folder {path.parent} does not exist")
            return
        raise StoreError(f"{path}: no such database (record or import a run first, or pass --db)")
    if path.is_dir():
        raise StoreError(f"{path}: is a directory, not a database file")
    size = path.stat().st_size
    if size == 0:
        if create:
            return
        raise StoreError(f"{path}: file is empty, not a p2w-rt database")
    with path.open("rb") as handle:
        header = handle.read(100)
    if len(header) < 100 or not header.startswith(SQLITE_MAGIC):
        raise StoreError(f"{path}: not a SQLite database")
    page_size = struct.unpack(">H", header[16:18])[0]
    page_size = 65536 if page_size == 1 else page_size
    change_counter, page_count = struct.unpack(">II", header[24:32])
    valid_for = struct.unpack(">I", header[92:96])[0]
    # A checkpoint writes page 1 (with the new page count) before the pages after it; killed in
    # between, the file is short but the WAL still holds every page, and SQLite recovers from it.
    wal = path.with_name(path.name + "-wal")
    recoverable = wal.exists() and wal.stat().st_size > 0
    if valid_for == change_counter and size < page_size * page_count and not recoverable:
        raise StoreError(f"{path}: database file is truncated ({size} of {page_size * page_count} bytes)")


def tables_of(cursor: Any) -> set[str]:
    cursor.execute("SELECT name FROM sqlite_master WHERE type='table'")
    return {row[0] for row in cursor.fetchall()}


def writable(path: Path) -> bool:
    """Whether this process may write the database: the file and its folder (for the WAL and shared-memory files).

    ``os.access`` asks the kernel, so a read-only mount counts as read-only even for root.
    """
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def opened_as(path: Path, *, read_only: bool) -> tuple[str, bool]:
    """What the driver opens, and whether it is a URI. Read-only is SQLite's ``mode=ro``; in a folder where the
    WAL's shared-memory file cannot be created and no WAL is left to read, ``immutable=1`` (nothing can change the
    file from there either)."""
    if not read_only:
        return str(path), False
    query = "mode=ro"
    wal = path.with_name(path.name + "-wal")
    if not os.access(path.parent, os.W_OK) and not (wal.exists() and wal.stat().st_size > 0):
        query += "&immutable=1"
    return f"file:{quote(str(path.resolve()))}?{query}", True


def url_of(path: Path, *, read_only: bool) -> URL:
    """The engine's URL for the database ``opened_as`` names, built from its parts: parsed as URL text, a path's
    ``?`` would start a query and its ``%41`` be unescaped, so that the engine set up another file than the store's."""
    from sqlalchemy.engine import URL

    database, uri = opened_as(path, read_only=read_only)
    return URL.create("sqlite+aiosqlite", database=database, query={"uri": "true"} if uri else {})


def make_engine(path: Path, *, read_only: bool, create: bool) -> AsyncEngine:
    """The SQLAlchemy engine of the store at ``path``: each connection set up by ``prepare``, ``BEGIN IMMEDIATE``
    when asked (``p2w_immediate``), driver errors naming the file."""
    from sqlalchemy import event
    from sqlalchemy.ext.asyncio import create_async_engine

    engine = create_async_engine(url_of(path, read_only=read_only), connect_args={"timeout": BUSY_TIMEOUT_MS / 1000})

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        prepare(dbapi_connection, read_only=read_only, create=create)

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Any) -> None:
        immediate = conn.get_execution_options().get("p2w_immediate")
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    @event.listens_for(engine.sync_engine, "handle_error")
    def _name_the_file(context: Any) -> Exception | None:
        return unreadable(path, context.original_exception)

    return engine


def prepare(dbapi_connection: Any, *, read_only: bool, create: bool) -> None:
    """Set up a new connection (the engine's, or a reading one): we issue BEGIN ourselves, wait for locks, and
    switch a file that is ours to WAL."""
    dbapi_connection.isolation_level = None  # we issue BEGIN ourselves
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    # WAL is persistent: never switch a foreign file, nor one opened read-only
    if not read_only and may_become_ours(tables_of(cursor), create=create):
        _switch_to_wal(cursor)
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _switch_to_wal(cursor: Any) -> None:
    """Put the file in WAL mode unless it is already. The switch takes an exclusive lock, and two processes making
    one new file at once may each hold the shared lock the other waits behind: SQLite then refuses one at once,
    without its busy handler, "database is locked". That one waits as the busy handler would (``BusyBackoff``) and
    looks again (``test_two_processes_appending_to_one_new_file...``: 2 failures in 15
    runs before)."""
    backoff = BusyBackoff()
    while True:
        try:
            cursor.execute("PRAGMA journal_mode")  # the engine's cursor returns nothing from execute
            if cursor.fetchone()[0] != "wal":
                cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            pause = backoff.pause(exc)
        time.sleep(pause)  # on the driver's thread, or the engine's set-up of a new file
