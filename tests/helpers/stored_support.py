"""What a test reads or damages in a database file whose imported episodes are segments, not rows.

Raw SQL on ``events`` sees a recording's steps; an imported episode (the demo's runs, ``import-trajectories``) is one
row of ``segments`` (docs/design/store.md, "Segments"). Tests that look up expected values read the events through
the store instead, and tests that damage an event as a failing disk would rewrite it inside its segment. Tests
that look for a secret read every value of the file, as someone holding it could.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import zstandard

from p2w_rt.schemas import StoredEvent
from p2w_runtime.store import open_store
from p2w_runtime.store._dictionaries import dictionary_of, load
from p2w_runtime.store._segments import segment_events, segment_row
from tests.helpers.raw_sqlite import raw_sqlite

_SEGMENT = "stream, first_seq, last_seq, first_position, prev_hash, head_hash, codec, data"


def stored_events(db: Path, *, prefix: str | None = None, types: list[str] | None = None) -> list[StoredEvent]:
    """The database's events in position order, rows and segments alike (opened read-only)."""

    async def read() -> list[StoredEvent]:
        async with open_store(db, create=False, read_only=True) as store:
            return [e async for e in store.read_all(stream_prefix=prefix, types=types)]

    return asyncio.run(read())


def run_of_label(db: Path, label: str) -> str:
    """The id of the run labelled ``label``."""
    (run_id,) = [e.stream for e in stored_events(db, types=["run.started"]) if e.payload["label"] == label]
    return run_id


def database_text(db: Path) -> str:
    """Every value of every table, blobs decompressed: what someone with the file could read."""
    parts: list[str] = []
    decompressor = zstandard.ZstdDecompressor()
    with closing(sqlite3.connect(db)) as conn:
        tables = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                for value in row:
                    if isinstance(value, bytes):
                        value = decompressor.decompress(value) if value[:4] == b"\x28\xb5\x2f\xfd" else value
                        value = value.decode("utf-8", "replace")
                    parts.append(str(value))
    return "\n".join(parts)


def rewrite_in_segment(db: Path, stream: str, change: Callable[[StoredEvent], str | None]) -> int:
    """Replace the payload text of the events of ``stream``'s segments for which ``change`` gives one, keeping the
    stored head hash (what an edit of the file does), with the append-only trigger dropped; how many changed."""
    changed = 0
    with raw_sqlite(db) as conn:
        conn.execute("DROP TRIGGER IF EXISTS segments_no_update")
        for row in conn.execute(f"SELECT {_SEGMENT} FROM segments WHERE stream = ?", (stream,)).fetchall():
            dictionary = dictionary_of(row[6])
            if dictionary is not None:
                load(dictionary, _blob(db, dictionary))
            events = segment_events(*row)
            for event in events:
                payload = change(event)
                if payload is not None:
                    event.payload_json = payload
                    changed += 1
            data = segment_row(events, row[3], dictionary)[-1]
            conn.execute("UPDATE segments SET data = ? WHERE first_position = ?", (data, row[3]))
    return changed


def _blob(db: Path, sha: str) -> bytes:
    async def read() -> bytes:
        async with open_store(db, create=False, read_only=True) as store:
            return await store.get_blob(sha)

    return asyncio.run(read())
