"""Kill a p2w-rt process between two of its appends: hold SQLite's write lock from the moment a query finds what the
process has just committed, so it writes nothing more, then SIGKILL it."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import time
from pathlib import Path

SEALED = "SELECT 1 FROM events JOIN run_labels ON stream = run_id WHERE label = ? AND type = ?"
"""Whether run LABEL (by its label) holds an event of a type: ``(label, "episode.sealed")``."""


def kill_once_written(proc: subprocess.Popen[bytes], db: Path, query: str, params: tuple[object, ...]) -> None:
    """SIGKILL ``proc`` once ``query`` finds a row in ``db``, holding the write lock from that look until it is dead;
    fails when ``proc`` ended first (it wrote past the point the test wanted)."""
    conn = sqlite3.connect(db, isolation_level=None, timeout=60)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            conn.execute("BEGIN IMMEDIATE")  # nobody writes while we look, nor after we find it
            if conn.execute(query, params).fetchone():
                break
            conn.execute("ROLLBACK")
            time.sleep(0.005)
        assert proc.poll() is None, "the process ended before it was caught"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        conn.close()
