"""Each episode is sealed in its run's stream when it finishes, and `verify` reports per run the events after the
last seal, so only the episodes in flight are ever unsealed and deleting a finished episode's newest events fails
plain `verify` (issue 23).

Real processes throughout: `p2w-rt record` subprocesses (killed with SIGKILL mid-episode, resumed, two workers on
one SQLite file), real Chromium on the demo sites, the scripted LLM, tampering with raw sqlite3 as an attacker does.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from p2w_runtime.testing import ScriptedLlm
from tests.helpers import tamper_support
from tests.helpers.paths import REPO
from tests.helpers.sample_llm import sample_agent_llm
from tests.helpers.seals_support import (
    cli,
    copy_db,
    count,
    episode_streams,
    rows,
    run_of,
    sealed_streams,
    uncovered,
    verified,
)

TRIGGERS = ("events_no_update", "events_delete_held")
EPISODES_AS_ROWS = True
"""These tests read the recorded events with SQL (``conftest._episodes_as_rows``)."""


def attacker(db: Path) -> AbstractContextManager[sqlite3.Connection]:
    """Raw sqlite3 with the events' append-only triggers dropped, as anyone holding the file can do."""
    return tamper_support.attacker(db, TRIGGERS)


def last_sealed(db: Path, run_id: str) -> str:
    """The episode that finished last (a resume records concurrently: not always the last one started)."""
    ((payload,),) = rows(db, "SELECT payload FROM events WHERE stream = ? AND type = 'episode.sealed' "
                             "ORDER BY seq DESC LIMIT 1", run_id)  # fmt: skip
    (seal,) = json.loads(payload)["seals"]
    return seal["stream"]


def record_args(db: Path, llm: ScriptedLlm, *extra: str) -> list[str]:
    args = ["--db", str(db), "record", "--model", "scripted-model", "--base-url", llm.base_url, "--api-key", "sk-x"]
    return [*args, "--scheme", "on-demand", *extra]


def spawn(args: list[str], cwd: Path, **env: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", "from p2w_rt.cli import main; main()", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO), **env},
    )


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLlm]:
    with sample_agent_llm() as server:
        yield server


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory, llm: ScriptedLlm) -> tuple[Path, Path]:
    """A `--level 2 --limit 3` recording killed -9 during its second episode (a copy kept as it was left), then
    resumed to the end: (the run in flight, the finished run)."""
    tmp = tmp_path_factory.mktemp("seals")
    db = tmp / "r.db"
    proc = spawn(record_args(db, llm, "--level", "2", "--limit", "3", "--concurrency", "1", "--label", "L"), tmp)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.poll() is None:
        finished = count(db, "SELECT count(*) FROM events WHERE type='episode.finished'")
        started = count(db, "SELECT count(*) FROM events WHERE type='episode.started'")
        second = count(db, "SELECT count(*) FROM events WHERE stream = (SELECT stream FROM events "
                            "WHERE type='episode.started' ORDER BY position LIMIT 1 OFFSET 1)")  # fmt: skip
        if finished == 1 and started == 2 and second >= 3:
            break
        time.sleep(0.05)
    assert proc.poll() is None, proc.stderr.read().decode()[-2000:] if proc.stderr else ""
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    in_flight = copy_db(db, tmp / "in-flight.db")
    resumed = cli(db, "record", "--resume", "L", "--base-url", llm.base_url, "--api-key", "sk-x")
    assert resumed.exit_code == 0, resumed.output
    return in_flight, db


@pytest.fixture
def in_flight(recorded: tuple[Path, Path], tmp_path: Path) -> Path:
    return copy_db(recorded[0], tmp_path / "in-flight.db")


@pytest.fixture
def finished(recorded: tuple[Path, Path], tmp_path: Path) -> Path:
    return copy_db(recorded[1], tmp_path / "finished.db")


def test_a_run_in_flight_leaves_only_the_episode_being_recorded_unsealed(in_flight: Path) -> None:
    run_id = run_of(in_flight)
    first, second = episode_streams(in_flight, run_id)
    assert sealed_streams(in_flight, run_id) == Counter({first: 1}), "the finished episode was sealed at once"
    assert count(in_flight, "SELECT count(*) FROM events WHERE type = 'run.finished'") == 0
    result, report = verified(in_flight)
    assert result.exit_code == 0 and report["ok"] and report["unsealed"] == []
    ((n,),) = rows(in_flight, "SELECT count(*) FROM events WHERE stream = ?", second)
    assert uncovered(report, run_id) == {second: n}
    assert f"unsealed: run {run_id}: {n} events in 1 stream are not covered by a seal ({second}: {n})" in result.output
    checked = report["events"] - 1  # the JSON check ran second and read the first one's verify mark too
    assert f"ok: 3 streams, {checked} events" in result.output and f"; {n} events not covered" in result.output


def test_deleting_the_newest_events_of_a_sealed_episode_fails_plain_verify(in_flight: Path) -> None:
    """Before episode seals this passed `verify`: no `run.finished` yet, so nothing covered the first episode."""
    run_id = run_of(in_flight)
    first, _ = episode_streams(in_flight, run_id)
    ((last,),) = rows(in_flight, "SELECT max(seq) FROM events WHERE stream = ?", first)
    with attacker(in_flight) as conn:
        conn.execute("DELETE FROM events WHERE stream = ? AND seq >= ?", (first, last - 1))
    result = cli(in_flight, "verify")
    assert result.exit_code == 1
    (problem,) = [line for line in result.output.splitlines() if line.startswith("MISMATCH")]
    assert f"stream {first} seq {last - 2}: stream truncated: {last - 2} events, sealed by episode.sealed" in problem
    assert f"({run_id} seq 2) with {last}" in problem


def test_the_unsealed_episode_in_flight_is_the_one_gap_left_and_it_is_reported(in_flight: Path) -> None:
    run_id = run_of(in_flight)
    _, second = episode_streams(in_flight, run_id)
    ((last,),) = rows(in_flight, "SELECT max(seq) FROM events WHERE stream = ?", second)
    with attacker(in_flight) as conn:
        conn.execute("DELETE FROM events WHERE stream = ? AND seq > 1", (second,))
    result, report = verified(in_flight)
    assert result.exit_code == 0, "no seal covers an episode still being recorded: nothing can show this"
    assert uncovered(report, run_id) == {second: 1} and last > 1


def test_the_resumed_run_seals_every_attempt_once_and_leaves_nothing_unsealed(finished: Path) -> None:
    run_id = run_of(finished)
    attempts = episode_streams(finished, run_id)
    assert len(attempts) == 4 and attempts[1] + "#2" in attempts  # the killed attempt, closed, and its retry
    assert sealed_streams(finished, run_id) == Counter(dict.fromkeys(attempts, 1))
    types = [t for (t,) in rows(finished, "SELECT type FROM events WHERE stream = ? ORDER BY seq", run_id)]
    assert types == ["run.started", "episode.sealed", "episode.sealed", "episode.sealed", "episode.sealed",
                     "run.finished"]  # fmt: skip
    result, report = verified(finished)
    assert result.exit_code == 0 and report["ok"]
    assert uncovered(report, run_id) == {}
    assert "unsealed" not in result.output and "; 0 events not covered by a seal" in result.output


def test_deleting_a_finished_runs_newest_events_fails_plain_verify_or_shows_as_its_unsealed_tail(
    finished: Path, tmp_path: Path
) -> None:
    """The issue's case: the newest events of a finished run, after its last seal, are gone. The last episode's
    tail is now named by its own seal; cutting that seal and `run.finished` too leaves the tail reported."""
    run_id = run_of(finished)
    newest = last_sealed(finished, run_id)
    ((last,),) = rows(finished, "SELECT max(seq) FROM events WHERE stream = ?", newest)
    cut = copy_db(finished, tmp_path / "cut.db")
    with attacker(cut) as conn:
        conn.execute("DELETE FROM events WHERE stream = ? AND seq >= ?", (newest, last - 2))
    result = cli(cut, "verify")
    assert result.exit_code == 1
    where = f"stream {newest} seq {last - 3}: stream truncated"
    truncated = [line for line in result.output.splitlines() if where in line]
    assert len(truncated) == 2  # by its episode.sealed and by run.finished
    assert {"episode.sealed" in line for line in truncated} == {True, False}
    with attacker(finished) as conn:
        (seal_seq,) = conn.execute("SELECT max(seq) FROM events WHERE stream = ? AND type = 'episode.sealed'",
                                   (run_id,)).fetchone()  # fmt: skip
        conn.execute("DELETE FROM events WHERE stream = ? AND seq >= ?", (run_id, seal_seq))
        conn.execute("DELETE FROM events WHERE stream = ? AND seq >= ?", (newest, last - 2))
    result, report = verified(finished)
    assert result.exit_code == 0  # a consistent prefix: the run now reads as one in flight...
    assert uncovered(report, run_id) == {newest: last - 3}  # ...and the episode it lost events of is named
    assert f"are not covered by a seal ({newest}: {last - 3})" in result.output
    (run,) = [json.loads(line) for line in cli(finished, "runs", "--json").output.splitlines()]
    assert run["status"] == "unfinished"


def test_a_bundle_of_the_run_carries_the_episode_seals_and_they_are_checked_on_import(
    finished: Path, tmp_path: Path
) -> None:
    import io

    import zstandard

    bundle = tmp_path / "run.p2w"
    assert cli(finished, "export", "L", "-o", str(bundle)).exit_code == 0
    target = tmp_path / "copy.db"
    assert cli(target, "import", str(bundle)).exit_code == 0
    _, report = verified(target)
    _, source = verified(finished)
    assert report["ok"] and report["seals"] == source["seals"] and uncovered(report, run_of(target)) == {}
    run_id = run_of(finished)
    newest = episode_streams(finished, run_id)[-1]
    text = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(bundle.read_bytes())).read().decode()
    records = [json.loads(line) for line in text.splitlines()]
    last = max(r["event"]["seq"] for r in records if r.get("event", {}).get("stream") == newest)
    dropped = [
        r
        for r in records
        if r.get("event", {}).get("type") != "run.finished"  # the run's stream stays a valid prefix
        and not (r.get("event", {}).get("stream") == newest and r["event"]["seq"] == last)
    ]
    dropped[0]["events"] -= len(records) - len(dropped)
    body = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in dropped)
    cut = tmp_path / "cut.p2w"
    cut.write_bytes(zstandard.ZstdCompressor().compress(body.encode()))
    refused = cli(tmp_path / "other.db", "import", str(cut))
    assert refused.exit_code == 1
    assert newest in refused.output and "stream truncated" in refused.output and "episode.sealed" in refused.output


def test_two_workers_appending_seals_to_one_run_stream_on_sqlite_lose_and_duplicate_nothing(
    llm: ScriptedLlm, tmp_path: Path
) -> None:
    """Two `record --worker` processes, two lanes each, on one SQLite file: every episode's seal goes into the
    one run stream they share, in a chain `verify` accepts, each episode sealed exactly once."""
    db = tmp_path / "w.db"
    args = record_args(db, llm, "--limit", "6", "--concurrency", "2", "--label", "shared", "--worker")
    workers = [spawn(args, tmp_path, P2W_WORKER_LEASE_S="30") for _ in range(2)]
    try:
        for w in workers:
            _, err = w.communicate(timeout=420)
            assert w.returncode == 0, err.decode()[-2000:]
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
    run_id = run_of(db)
    attempts = episode_streams(db, run_id)
    assert len(attempts) == 6
    assert sealed_streams(db, run_id) == Counter(dict.fromkeys(attempts, 1))
    pids = {pid for (pid,) in rows(db, "SELECT pid FROM work_items WHERE run_id = ? AND done", run_id)}
    assert len(pids) == 2, "both workers recorded episodes, so both appended seals to the run's stream"
    seqs = [s for (s,) in rows(db, "SELECT seq FROM events WHERE stream = ? ORDER BY position", run_id)]
    assert seqs == list(range(1, 6 + 3))  # run.started, six seals, run.finished: no gap, no duplicate
    result, report = verified(db)
    assert result.exit_code == 0 and report["ok"] and uncovered(report, run_id) == {}
