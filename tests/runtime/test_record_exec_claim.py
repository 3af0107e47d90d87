"""`record --exec`: a first recording holds its run as a resume does, so `--resume` and `--worker` of the run are
refused while it records, in one line naming the run and its process, writing nothing; once it ends, normally or
killed -9, the run can be resumed, also when it recorded on another host (its claim renewed, then no more). Agents
here ask no model: shell scripts."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers.exec_support import P2W_RT, TASK, p2w_rt
from tests.helpers.paths import REPO
from tests.helpers.raw_sqlite import raw_sqlite
from tests.helpers.seals_support import rows
from tests.helpers.suite_tmp import process_tmpdir

ENDPOINT = ("--base-url", "http://127.0.0.1:9/v1")  # never called: these agents ask no model
OTHER = "Lena_Fischer_A1"
EVENTS = "SELECT count(*), max(position) FROM events"
ELSEWHERE = "elsewhere.invalid"


def _recording(db: Path, agent: Path, tmp: Path) -> subprocess.Popen[str]:
    """A first recording of two tasks, one at a time, whose agent waits until the test lets it go."""
    return subprocess.Popen(
        [
            P2W_RT, "--db", str(db), "--log-file", str(db.with_suffix(".jsonl")), "record", "--exec", f"sh {agent}",
            *ENDPOINT, "--model", "m", "--task", TASK, "--task", OTHER, "--concurrency", "1", "--label", "R",
        ],
        cwd=REPO, env={**os.environ, "TMPDIR": str(tmp)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip


def _wait_for(path: Path, recorder: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 300  # Chromium's start on a loaded machine
    while not path.exists():
        assert recorder.poll() is None, recorder.communicate()
        assert time.monotonic() < deadline, "the agent never started"
        time.sleep(0.2)


def _refused(db: Path, agent: Path, *args: str) -> str:
    before = rows(db, EVENTS)
    done = p2w_rt(db, "record", "--exec", f"sh {agent}", *ENDPOINT, "--timeout", "20", *args)  # not waited for
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert rows(db, EVENTS) == before  # nothing written
    (line,) = done.stderr.strip().splitlines()
    return line


def test_a_run_being_recorded_is_not_resumed_nor_joined_and_is_resumable_once_its_recorder_is_killed(
    tmp_path: Path,
) -> None:
    db, agent, began, go = tmp_path / "p2w.db", tmp_path / "wait.sh", tmp_path / "began", tmp_path / "go"
    agent.write_text(f'touch {began}\nwhile [ ! -e {go} ]; do sleep 0.1; done\necho \'{{"answer": "ok"}}\'\n')
    with process_tmpdir() as tmp:  # what the killed recorder and its Chromium leave goes with it
        _refuse_then_kill(db, agent, began, _recording(db, agent, tmp))
    go.touch()
    resumed = p2w_rt(db, "record", "--resume", "R", "--exec", f"sh {agent}", *ENDPOINT)  # the dead claim is taken over
    assert resumed.returncode == 0 and "2 answered" in resumed.stdout, resumed.stderr
    again = p2w_rt(db, "record", "--resume", "R", "--exec", f"sh {agent}", *ENDPOINT)  # released at its end
    assert again.returncode == 0 and "0 episodes, 2 kept from before" in again.stdout, again.stderr
    assert p2w_rt(db, "verify", "R").returncode == 0


def _refuse_then_kill(db: Path, agent: Path, began: Path, recorder: subprocess.Popen[str]) -> None:
    """While ``recorder`` records its first episode: a resume and a worker are refused; then it is killed -9."""
    try:
        _wait_for(began, recorder)
        said = _refused(db, agent, "--resume", "R")
        assert said == (
            f"error: run 'R' is being recorded by another process (process {recorder.pid} on "
            f"{socket.gethostname()}); resume it once that one has ended, for what it leaves to do"
        )
        said = _refused(db, agent, "--label", "R", "--worker", "--model", "m", "--task", TASK, "--task", OTHER)
        assert said == (
            f"error: run 'R' is being recorded by one process alone (process {recorder.pid} on "
            f"{socket.gethostname()}), not by workers; resume it once that one has ended, for what it leaves to do"
        )
    finally:
        os.killpg(recorder.pid, signal.SIGKILL)  # the recorder, its agent and Chromium; no clean-up runs
        recorder.wait()


def test_a_run_recorded_to_its_end_or_failing_is_released(tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    failed = p2w_rt(db, "record", "--exec", "sh -c 'exit 3'", *ENDPOINT, "--model", "m", "--task", TASK, "--label", "R")
    assert failed.returncode == 1 and "1 error" in failed.stdout, failed.stderr  # every episode failed
    resumed = p2w_rt(db, "record", "--resume", "R", "--exec", "sh -c 'exit 3'", *ENDPOINT)
    assert resumed.returncode == 0 and "1 kept from before" in resumed.stdout, resumed.stderr


def test_a_recorder_on_another_host_keeps_its_run_by_renewing_its_claim_and_loses_it_once_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The recorder's claim is moved to another host by SQL (a process id there cannot be checked): held for hours
    but renewed, the resume is refused; killed -9, its renewals stop and the resume takes the run over, in minutes
    (here 5 s), not hours."""
    monkeypatch.setenv("P2W_CLAIM_RENEW_S", "0.5")  # every p2w-rt below: renewed every 0.5 s, stale after 5 s
    db, agent, began, go = tmp_path / "p2w.db", tmp_path / "wait.sh", tmp_path / "began", tmp_path / "go"
    agent.write_text(f'touch {began}\nwhile [ ! -e {go} ]; do sleep 0.1; done\necho \'{{"answer": "ok"}}\'\n')
    with process_tmpdir() as tmp:
        recorder = _recording(db, agent, tmp)
        try:
            _wait_for(began, recorder)
            hours_ago = time.time() - 7 * 3600
            _move_claim(db, hours_ago)  # as if recording on another host for seven hours
            _wait_renewed(db, hours_ago, recorder)
            said = _refused(db, agent, "--resume", "R")
            assert said.startswith(f"error: run 'R' is being recorded by another process (process {recorder.pid} on ")
            assert said.endswith(f" {ELSEWHERE}); resume it once that one has ended, for what it leaves to do")
        finally:
            os.killpg(recorder.pid, signal.SIGKILL)
            recorder.wait()
    _move_claim(db, time.time() - 60)  # its last renewal a minute ago: stale, though claimed far less than hours ago
    go.touch()
    resumed = p2w_rt(db, "record", "--resume", "R", "--exec", f"sh {agent}", *ENDPOINT)
    assert resumed.returncode == 0 and "2 answered" in resumed.stdout, resumed.stderr
    assert rows(db, "SELECT count(*) FROM claims") == [(0,)]


def _move_claim(db: Path, claimed_at: float) -> None:
    with raw_sqlite(db, timeout=60) as conn:
        moved = conn.execute(
            "UPDATE claims SET host = ?, claimed_at = ? WHERE key = 'record/R'", (ELSEWHERE, claimed_at)
        ).rowcount
    assert moved == 1


def _wait_renewed(db: Path, since: float, recorder: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120  # two renewals a second; a loaded machine may delay a few
    while rows(db, "SELECT claimed_at FROM claims WHERE key = 'record/R'")[0][0] <= since:
        assert recorder.poll() is None, recorder.communicate()
        assert time.monotonic() < deadline, "the recorder never renewed its claim"
        time.sleep(0.2)
