"""A --db file that is missing, empty, truncated, corrupt or foreign: one line naming it, exit 2, file untouched."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import struct
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.store import StoreError, connect_store, open_store, verify_store
from p2w_runtime.store._sqlite_file import check_sqlite_file
from tests.helpers.builders import build_run
from tests.helpers.raw_sqlite import raw_sqlite

PAGE = 4096


def make_store(path: Path, runs: int = 1) -> None:
    async def fill() -> None:
        async with open_store(path) as store:
            for i in range(runs):
                await build_run(store, f"run-{i}", tasks=tuple(f"Ann_Lee_A{n}" for n in range(1, 6)))

    asyncio.run(fill())


def missing(path: Path) -> None:
    pass


def empty(path: Path) -> None:
    path.touch()


def truncated(path: Path) -> None:
    make_store(path, runs=3)
    os.truncate(path, path.stat().st_size // 2)


def cut_in_header(path: Path) -> None:
    make_store(path)
    os.truncate(path, 60)


def text_file(path: Path) -> None:
    path.write_text("task_id,intent\nAnn_Lee_A1,find a vegan bakery\n" * 50)


def corrupt_pages(path: Path) -> None:
    make_store(path, runs=3)
    with path.open("r+b") as handle:
        handle.seek(2 * PAGE)
        handle.write(b"\xa5" * (path.stat().st_size - 3 * PAGE))


def foreign_sqlite(path: Path) -> None:
    with raw_sqlite(path) as conn:
        conn.execute("CREATE TABLE notes (body TEXT)")
        conn.execute("INSERT INTO notes VALUES ('not ours')")


CASES = [missing, empty, truncated, cut_in_header, text_file, corrupt_pages, foreign_sqlite]


@pytest.mark.parametrize("damage", CASES, ids=[c.__name__ for c in CASES])
@pytest.mark.parametrize("command", [["runs"], ["verify"]], ids=["runs", "verify"])
def test_a_bad_db_file_is_one_line_exit_2_and_left_as_it_was(
    tmp_path: Path, damage: object, command: list[str]
) -> None:
    db = tmp_path / "p2w.db"
    damage(db)  # type: ignore[operator]
    before = db.read_bytes() if db.exists() else None
    result = CliRunner().invoke(main, ["--db", str(db), *command])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and str(db) in lines[0], result.stderr
    assert "Traceback" not in result.output
    assert result.stdout == ""
    assert (db.read_bytes() if db.exists() else None) == before
    assert not db.with_name("p2w.db-wal").exists() or db.with_name("p2w.db-wal").stat().st_size == 0


def test_the_installed_command_prints_no_traceback_for_a_corrupt_file(tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    corrupt_pages(db)
    script = Path(sys.executable).with_name("p2w-rt")
    done = subprocess.run(
        [str(script), "--db", str(db), "--log-file", str(tmp_path / "log.jsonl"), "runs"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"error: {db}: unreadable database (database disk image is malformed)"]
    assert done.stdout == ""


async def test_a_foreign_sqlite_file_is_refused_untouched_even_when_creating(tmp_path: Path) -> None:
    db = tmp_path / "notes.sqlite"
    foreign_sqlite(db)
    before = db.read_bytes()
    for create in (True, False):
        with pytest.raises(StoreError, match="not a p2w-rt event store"):
            await connect_store(db, create=create)
    assert db.read_bytes() == before
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("SELECT name FROM sqlite_master").fetchall() == [("notes",)]


async def test_an_empty_file_opens_as_a_new_store_only_when_creating(tmp_path: Path) -> None:
    """A new database is an empty file until its first page is written; a second process may open it then."""
    db = tmp_path / "p2w.db"
    db.touch()
    with pytest.raises(StoreError, match="empty"):
        await connect_store(db, create=False)
    store = await connect_store(db, create=True)
    try:
        assert await store.count() == (0, 0)
    finally:
        await store.close()
    assert db.read_bytes().startswith(b"SQLite format 3\x00")


def _committed_page_one(wal: bytes) -> bytes:
    """The last committed version of page 1 in a WAL file (frames whose salts match the header)."""
    page_size = struct.unpack(">I", wal[8:12])[0]
    salts = wal[16:24]
    latest = None
    candidate = None
    offset = 32
    while offset + 24 + page_size <= len(wal):
        pgno, commit_size = struct.unpack(">II", wal[offset : offset + 8])
        if wal[offset + 8 : offset + 16] != salts:
            break
        if pgno == 1:
            candidate = wal[offset + 24 : offset + 24 + page_size]
        if commit_size:
            latest = candidate or latest
        offset += 24 + page_size
    assert latest is not None, "no committed page 1 in the WAL"
    return latest


async def test_a_file_cut_short_by_an_interrupted_checkpoint_opens_from_its_wal(tmp_path: Path) -> None:
    """kill -9 during a checkpoint: page 1 (new page count) is written, later pages are not, the WAL has them."""
    live = tmp_path / "live.db"
    async with open_store(live) as store:
        await build_run(store, "first", tasks=tuple(f"Ann_Lee_A{n}" for n in range(1, 6)))
    keeper = sqlite3.connect(live)  # holds the WAL open, as a process killed mid-checkpoint would
    try:
        keeper.execute("PRAGMA wal_autocheckpoint=0")
        keeper.execute("SELECT count(*) FROM events").fetchone()  # now attached to the WAL index
        async with open_store(live) as store:
            for i in range(3):
                await build_run(store, f"later-{i}", tasks=tuple(f"Bo_Chen_B{n}" for n in range(1, 6)))
        snapshot = tmp_path / "snap"
        snapshot.mkdir()
        shutil.copy(live, snapshot / "p2w.db")
        shutil.copy(live.with_name("live.db-wal"), snapshot / "p2w.db-wal")
    finally:
        keeper.close()
    db = snapshot / "p2w.db"
    page_one = _committed_page_one((snapshot / "p2w.db-wal").read_bytes())
    with db.open("r+b") as handle:
        handle.write(page_one)
    change_counter, page_count = struct.unpack(">II", page_one[24:32])
    assert struct.unpack(">I", page_one[92:96])[0] == change_counter
    assert db.stat().st_size < page_count * PAGE  # the state we mean to test: header ahead of the file

    check_sqlite_file(db, create=False)
    store = await connect_store(db, create=False)
    try:
        report = await verify_store(store)
        assert report.ok, report.problems[:3]
        assert report.streams == 4 * 6 and report.events == 4 * (2 + 5 * 9)
    finally:
        await store.close()


def test_a_full_disk_is_said_as_such_and_what_was_recorded_stays(tmp_path: Path) -> None:
    """A real full file system: a 1 MiB tmpfs mounted in a private mount namespace (``unshare``), holding a store
    with one imported run; importing a 2 MB bundle into it fills the disk."""
    from p2w_runtime.demo.examples import example_run_bundles

    script = Path(sys.executable).with_name("p2w-rt")
    db = tmp_path / "p2w.db"
    imported = subprocess.run(
        [str(script), "--db", str(db), "import-trajectories", "--examples", "--format", "p2w-agentoccam"],
        capture_output=True,
        timeout=120,
    )
    assert imported.returncode == 0, imported.stderr
    disk = tmp_path / "disk"
    disk.mkdir()
    full = disk / "p2w.db"
    steps = [
        f"mount -t tmpfs -o size=1m tmpfs {disk}",
        f"cp {db} {full}",
        f'"{script}" --db {full} import {example_run_bundles()[0]}; echo "exit $?"',
        f'"{script}" --db {full} verify; "{script}" --db {full} runs --json',
    ]
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", " && ".join(steps[:2]) + " && " + "; ".join(steps[2:])],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.stderr.splitlines() == [
        f"error: {full}: the disk is full; the write that did not fit was undone and nothing already recorded was "
        "lost: free some space and run the command again"
    ]
    lines = done.stdout.splitlines()
    assert lines[0] == "exit 2"
    assert lines[1].startswith("ok: 4 streams, 66 events, 9 blobs, 6 seals verified")
    assert [json.loads(line)["episodes"] for line in lines[2:]] == [3], lines  # the one run, whole
