"""Reading a store's episode seals and what ``verify`` says of them, as the seal tests do: the CLI in process, raw
SQL on the file, the store for what a segment holds."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections import Counter
from pathlib import Path

from click.testing import CliRunner, Result

from p2w_rt.cli import main
from p2w_runtime.store import open_store
from tests.helpers.raw_sqlite import raw_sqlite


def cli(db: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)


def rows(db: Path, sql: str, *params: object) -> list[tuple]:
    with raw_sqlite(db) as conn:
        return conn.execute(sql, params).fetchall()


def count(db: Path, sql: str) -> int:
    try:
        return rows(db, sql)[0][0]
    except sqlite3.Error:
        return 0


def copy_db(source: Path, target: Path) -> Path:
    """A copy of a live SQLite file, its WAL included."""
    with raw_sqlite(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    return target


def verified(db: Path, *args: str) -> tuple[Result, dict]:
    """The same full check twice, as text and as JSON (the first one's verify mark would make the second read only
    what follows it)."""
    result = cli(db, "verify", "--full", *args)
    as_json = cli(db, "verify", "--full", "--json", *args)
    return result, json.loads(as_json.stdout)


def uncovered(report: dict, run_id: str) -> dict[str, int]:
    (tail,) = [t for t in report["uncovered"] if t["run_id"] == run_id]
    assert tail["events"] == sum(tail["streams"].values())
    return tail["streams"]


def sealed_streams(db: Path, run_id: str) -> Counter[str]:
    """How often each stream is named by an ``episode.sealed`` in the run's stream."""
    found: Counter[str] = Counter()
    for (payload,) in rows(db, "SELECT payload FROM events WHERE stream = ? AND type = 'episode.sealed'", run_id):
        found.update(seal["stream"] for seal in json.loads(payload)["seals"])
    return found


def episode_streams(db: Path, run_id: str) -> list[str]:
    """Through the store: an imported episode is a segment, not rows (docs/design/store.md, "Segments")."""

    async def started() -> list[str]:
        async with open_store(db, create=False, read_only=True) as store:
            return [e.stream async for e in store.read_all(stream_prefix=f"{run_id}/", types=["episode.started"])]

    return asyncio.run(started())


def stream_head(db: Path, stream: str) -> tuple[int, str]:
    async def head() -> tuple[int, str]:
        async with open_store(db, create=False, read_only=True) as store:
            found = await store.stream_head(stream)
            assert found is not None
            return found.last_seq, found.last_hash

    return asyncio.run(head())


def run_of(db: Path) -> str:
    ((run_id,),) = rows(db, "SELECT stream FROM events WHERE type = 'run.started'")
    return run_id
