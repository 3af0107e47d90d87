"""The attacker of the tamper tests: anyone holding a SQLite file can drop its append-only triggers and edit it."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.helpers.raw_sqlite import raw_sqlite

TRIGGERS = ("events_no_update", "events_delete_held", "blobs_no_update", "blobs_no_delete")
"""The SQLite store's append-only triggers on events and blobs."""


@contextmanager
def attacker(db: Path, triggers: tuple[str, ...] = TRIGGERS) -> Iterator[sqlite3.Connection]:
    """A plain sqlite3 connection in autocommit with ``triggers`` dropped, closed when the block ends
    (``raw_sqlite``)."""
    with raw_sqlite(db, isolation_level=None) as conn:
        for trigger in triggers:
            conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
        yield conn
