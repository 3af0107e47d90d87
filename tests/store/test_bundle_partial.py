"""A bundle import cut short, and an export of a run that grows while it is written.

An import writes a batch at a time, so one killed midway leaves part of the run: that part must read as a recording
killed midway does (the run unfinished, its episodes so far unsealed, nothing ``verify`` calls a mismatch), and
importing the bundle again must complete it. An export reads the run twice (its counts, then its lines): a run
recorded meanwhile must still give a bundle that imports.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.schemas import NewEvent, RunFinished, uuid7
from p2w_runtime.domain import append_sealed, list_runs
from p2w_runtime.store import (
    EventStore,
    _bundle,
    export_bundle,
    import_bundle,
    open_store,
    seal_streams,
    verify_whole_store,
)
from tests.helpers.builders import episode, run_started
from tests.helpers.suite_tmp import process_tmpdir

P2W_RT = str(Path(sys.executable).with_name("p2w-rt"))
TASKS = tuple(f"Ann_Lee_{letter}{n}" for letter in "ABC" for n in range(1, 5))
BATCH = 10
"""Events per import batch in these tests: a dozen episodes of 8 events each cut into several batches."""


PAGE = b"<html>the same page</html>"


class Cut(Exception):
    """Stands for the kill: raised after a batch is committed, nothing more is written."""


async def _recorded(store: EventStore) -> str:
    """A finished run sealed episode by episode, as ``record`` writes it."""
    run_id = uuid7()
    await store.append([run_started(run_id, "december")])
    for task in TASKS:
        events, blobs = episode(run_id, task)
        await append_sealed(store, events, blobs)
    seals = await seal_streams(store, run_id, into=run_id, whole=True)
    await store.append(
        [NewEvent(stream=run_id, payload=RunFinished(status="completed", episodes=len(TASKS), seals=seals))]
    )
    return run_id


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    path = tmp_path / "december.p2w"

    async def make() -> None:
        async with open_store(tmp_path / "source.db") as store:
            run_id = await _recorded(store)
            await export_bundle(store, run_id, path)

    asyncio.run(make())
    return path


async def _state(db: Path) -> tuple[str, int, list[str]]:
    """The run's status and counted episodes as ``runs`` shows them, and every problem ``verify --full`` finds."""
    async with open_store(db, create=False, read_only=True) as store:
        (run,) = await list_runs(store)
        report = await verify_whole_store(store, full=True)
    return run.status, run.episodes, [str(problem) for problem in report.problems]


def test_an_import_cut_after_any_batch_leaves_an_unfinished_run_verify_accepts_and_a_second_import_completes(
    bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_bundle, "EVENT_BATCH", BATCH)
    batches = asyncio.run(_import(bundle, tmp_path / "whole.db"))
    assert batches >= 5
    assert asyncio.run(_state(tmp_path / "whole.db")) == ("completed", len(TASKS), [])
    for cut_after in range(1, batches):
        db = tmp_path / f"cut-{cut_after}.db"
        with pytest.raises(Cut):
            asyncio.run(_import(bundle, db, cut_after=cut_after))
        status, episodes, problems = asyncio.run(_state(db))
        assert status == "unfinished" and episodes <= len(TASKS) and problems == [], (cut_after, problems)
        asyncio.run(_import(bundle, db))
        assert asyncio.run(_state(db)) == ("completed", len(TASKS), []), cut_after


async def _import(bundle: Path, db: Path, *, cut_after: int | None = None) -> int:
    """Import ``bundle`` into ``db``, raising ``Cut`` once ``cut_after`` batches are written; the batches written."""
    batches = 0

    def written(done: int, total: int) -> None:
        nonlocal batches
        batches += 1
        if batches == cut_after:
            raise Cut

    async with open_store(db) as store:
        await import_bundle(store, bundle, progress=written)
    return batches


def test_an_import_killed_with_sigkill_leaves_an_unfinished_run_and_runs_to_the_end_again(
    bundle: Path, tmp_path: Path
) -> None:
    db = tmp_path / "killed.db"
    code = (
        "import sys; from p2w_runtime.store import _bundle; _bundle.EVENT_BATCH = 5; "
        "from p2w_rt.cli import main; sys.argv[1:] = ['--db', sys.argv[1], 'import', sys.argv[2]]; main()"
    )
    with process_tmpdir() as tmp:
        env = {**os.environ, "TMPDIR": str(tmp)}
        child = subprocess.Popen([sys.executable, "-c", code, str(db), str(bundle)], env=env)
        try:
            deadline = time.monotonic() + 60
            while child.poll() is None and time.monotonic() < deadline:
                if db.exists() and _events_written(db) > 0:
                    os.kill(child.pid, signal.SIGKILL)
                    break
                time.sleep(0.002)
        finally:
            child.wait()
        assert child.returncode == -signal.SIGKILL, "the import ended before a row was seen: nothing was cut"
        assert [p.name for p in tmp.iterdir()], "the killed import left its private copy of the bundle"
        status, episodes, problems = asyncio.run(_state(db))
        assert status == "unfinished" and problems == []
        again = subprocess.run(
            [P2W_RT, "--db", str(db), "import", str(bundle)], env=env, capture_output=True, text=True
        )
        assert again.returncode == 0, again.stderr.decode()
        assert asyncio.run(_state(db)) == ("completed", len(TASKS), [])
        assert not list(tmp.iterdir()), "the next import removes the copy a killed one left"


def _events_written(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.01) as conn:
            return int(conn.execute("SELECT count(*) FROM events").fetchone()[0])
    except sqlite3.Error:
        return 0


def test_an_export_of_a_run_recorded_meanwhile_holds_the_run_as_it_stood_and_imports(tmp_path: Path) -> None:
    source, path = tmp_path / "source.db", tmp_path / "growing.p2w"

    async def export_while_recording() -> tuple[int, int]:
        async with open_store(source) as store, open_store(source) as recorder:
            run_id = uuid7()
            await store.append([run_started(run_id, "growing")])
            for n in range(400):  # three pages of reads: the export records more at 500 events, before the third
                await store.append(*episode(run_id, f"Ann_Lee_A{n}", page=PAGE))
            before = await store.log_end()
            grown = 0

            def record_more(done: int, total: int) -> None:  # between the export's count and its last line
                nonlocal grown
                events, _ = episode(run_id, f"Bo_Kim_A{grown + 1}", page=PAGE)  # its page is stored already
                assert recorder.append_now(events) is not None
                grown += 1

            summary = await export_bundle(store, run_id, path, progress=record_more)
            assert grown > 0 and await store.log_end() > before
            return summary.events, before

    events, before = asyncio.run(export_while_recording())
    assert events == before, "the bundle holds the run as the log stood when the export began"
    imported = CliRunner().invoke(main, ["--db", str(tmp_path / "target.db"), "import", str(path)])
    assert imported.exit_code == 0, imported.output
    assert f": {events} new events, 1 blobs" in imported.output
