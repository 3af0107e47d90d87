"""A store's SQLite file opened behind the store's back (to tamper with it, to read a table as it is), closed when
the block ends.

``with sqlite3.connect(path) as conn`` commits at the end of the block but does not close: on Python 3.11 a connection
is in a reference cycle (its statement cache), so it stays open until the cyclic collector frees it, at whatever
moment and on whatever thread that happens. A test that killed a writer and then opened the store met such a
connection closed meanwhile: the last to close deleted the ``-shm`` file under the store's new connection
(``SQLITE_IOERR_SHORT_READ``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def raw_sqlite(path: str | Path, **options: Any) -> Iterator[sqlite3.Connection]:
    """``sqlite3.connect(path, **options)`` for the block: committed as ``with conn`` commits (rolled back on an
    error), then closed."""
    conn = sqlite3.connect(path, **options)
    try:
        with conn:
            yield conn
    finally:
        conn.close()
