"""The attacker of the tamper tests: anyone holding a SQLite file can drop its append-only triggers and edit it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

TRIGGERS = ("events_no_update", "events_delete_held", "blobs_no_update", "blobs_no_delete")
"""The SQLite store's append-only triggers on events and blobs."""


def attacker(db: Path, triggers: tuple[str, ...] = TRIGGERS) -> sqlite3.Connection:
    """A plain sqlite3 connection in autocommit with ``triggers`` dropped."""
    conn = sqlite3.connect(db, isolation_level=None)
    for trigger in triggers:
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    return conn
