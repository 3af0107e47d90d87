"""`record --exec CMD --worker`: several `p2w-rt` processes record one run of an outside agent (the Python example,
which knows nothing of p2w-rt) on one SQLite file, through the own agent's worker loop: leases, a killed worker's
half episode closed as abandoned and its task recorded again, the run finished once.

Real processes throughout: `p2w-rt` workers, the example agent, Chromium on the demo sites, SIGKILL; the model is
the scripted server, each answer held back a little so that a worker can be caught mid-episode.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager, suppress
from pathlib import Path

import pytest

from p2w_runtime.agent._worker import ABANDONED_DETAIL
from p2w_runtime.testing import Delay, ScriptedLlm, Text
from tests.helpers.paths import REPO

P2W_RT = str(Path(sys.executable).with_name("p2w-rt"))
AGENT = f"{sys.executable} examples/exec_agent.py"
TASKS = 4
LEASE_S = 3

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLlm]:
    """One model call per episode: the agent stops with an answer naming its task, a second after it asked."""
    with ScriptedLlm() as server:
        server.handle_with(lambda request: Delay(1.0, Text(f"Action: stop [done: {_task_of(request)}]")))
        yield server


def _task_of(request: dict[str, object]) -> str:
    asked = json.dumps(request.get("messages"))
    found = re.search(r"Task: ([^\\]{0,40})", asked)
    return found.group(1) if found else "?"


def _worker_args(db: Path, llm: ScriptedLlm, label: str = "shared", limit: int = TASKS) -> list[str]:
    return [
        P2W_RT, "--db", str(db), "record", "--exec", AGENT, "--base-url", llm.base_url, "--model", "scripted-model",
        "--limit", str(limit), "--concurrency", "1", "--label", label, "--worker",
    ]  # fmt: skip


@contextmanager
def _workers(args: list[str], folder: Path, count: int) -> Iterator[list[subprocess.Popen[str]]]:
    """``count`` worker processes, each in a session of its own (so that a killed one's Chromium goes with it),
    output to files; any still running at the end is killed with its session."""
    env = {**os.environ, "P2W_WORKER_LEASE_S": str(LEASE_S)}
    started = []
    for n in range(count):
        with (folder / f"w{n}.out").open("w") as out, (folder / f"w{n}.err").open("w") as err:
            started.append(
                subprocess.Popen(args, cwd=REPO, stdout=out, stderr=err, text=True, env=env, start_new_session=True)
            )
    try:
        yield started
    finally:
        for w in started:
            _kill_session(w)


def _kill_session(worker: subprocess.Popen[str]) -> None:
    with suppress(ProcessLookupError):
        os.killpg(worker.pid, signal.SIGKILL)
    worker.wait()


def _output(folder: Path, n: int) -> tuple[str, str]:
    return (folder / f"w{n}.out").read_text(), (folder / f"w{n}.err").read_text()


def _p2w_rt(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([P2W_RT, "--db", str(db), *args], capture_output=True, text=True, cwd=REPO, timeout=300)


def _query(db: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    if not db.exists():
        return []
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)) as conn:
            return conn.execute(sql, params).fetchall()
    except sqlite3.OperationalError:  # the tables are not made yet
        return []


def _mid_episode(db: Path, pids: set[int]) -> int | None:
    """The pid of a worker in ``pids`` holding a task whose episode has started and not finished."""
    rows = _query(
        db,
        "SELECT w.pid FROM work_items w WHERE NOT w.done AND w.owner IS NOT NULL AND EXISTS ("
        " SELECT 1 FROM events e WHERE e.type = 'episode.started' AND e.stream LIKE '%/' || w.task_id || '%'"
        " AND NOT EXISTS (SELECT 1 FROM events f WHERE f.stream = e.stream AND f.type = 'episode.finished'))",
    )
    return next((int(str(pid)) for (pid,) in rows if pid in pids), None)


def _finished_events(db: Path) -> list[tuple[str, dict[str, object]]]:
    rows = _query(db, "SELECT stream, payload FROM events WHERE type = 'episode.finished' ORDER BY position")
    return [(str(stream), json.loads(str(payload))) for stream, payload in rows]


def _check_run(db: Path, label: str) -> list[dict[str, object]]:
    """The run is whole: verified, completed once, every task counted once and by the example agent; its
    `runs --progress` rows."""
    verified = _p2w_rt(db, "verify", label)
    assert verified.returncode == 0 and "0 events not covered by a seal" in verified.stdout, verified.stdout
    (run,) = [json.loads(line) for line in _p2w_rt(db, "runs", "--json").stdout.splitlines()]
    assert (run["label"], run["agent"], run["status"]) == (label, "exec:exec_agent.py", "completed")
    assert len(_query(db, "SELECT 1 FROM events WHERE type = 'run.finished'")) == 1
    assert _query(db, "SELECT count(*), sum(done) FROM work_items") == [(TASKS, TASKS)]
    progress = _p2w_rt(db, "runs", "--progress", label, "--json")
    assert progress.returncode == 0, progress.stderr
    rows = [json.loads(line) for line in progress.stdout.splitlines()]
    assert len(rows) == TASKS and all(r["state"] == "done" and r["end_reason"] == "answered" for r in rows)
    return rows


def test_two_exec_workers_record_one_run_every_task_once(llm: ScriptedLlm, tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    with _workers(_worker_args(db, llm), tmp_path, 2) as workers:
        for w in workers:
            w.wait(timeout=400)
        outputs = [_output(tmp_path, n) for n in range(2)]
        for w, (_, err) in zip(workers, outputs, strict=True):
            assert w.returncode == 0, err[-3000:]
    recorded = [re.search(r"recorded shared \(\S+\): (\d+) episodes?", out) for out, _ in outputs]
    assert all(recorded), outputs
    assert sum(int(found.group(1)) for found in recorded if found) == TASKS  # each task recorded by one of them
    rows = _check_run(db, "shared")
    assert all(r["attempts"] == 1 for r in rows)
    finished = _finished_events(db)
    assert len(finished) == TASKS and len({stream for stream, _ in finished}) == TASKS
    assert all(str(payload["answer"]).startswith("done: ") for _, payload in finished)  # the agent's own answer


def test_a_killed_exec_worker_has_its_task_taken_over(llm: ScriptedLlm, tmp_path: Path) -> None:
    """SIGKILL to a worker (and its session: its Chromium) while its agent waits for the model: the other worker
    waits out the lease, closes the half episode as abandoned, records the task again as `TASK#2`, finishes the run."""
    db = tmp_path / "p2w.db"
    with _workers(_worker_args(db, llm), tmp_path, 2) as workers:
        deadline, victim = time.monotonic() + 300, None
        while victim is None:
            assert time.monotonic() < deadline, "no worker was ever seen mid-episode"
            victim = _mid_episode(db, {w.pid for w in workers if w.poll() is None})
            time.sleep(0.1)
        (killed,) = [w for w in workers if w.pid == victim]
        _kill_session(killed)
        (survivor,) = [w for w in workers if w is not killed]
        survivor.wait(timeout=400)
        out, err = _output(tmp_path, workers.index(survivor))
        assert survivor.returncode == 0, err[-3000:]
    rows = _check_run(db, "shared")
    assert sorted(r["attempts"] for r in rows) == [1] * (TASKS - 1) + [2]
    (abandoned,) = [(s, p) for s, p in _finished_events(db) if p["end_reason"] == "aborted"]
    assert abandoned[1]["detail"] == ABANDONED_DETAIL
    task = abandoned[0].rsplit("/", 1)[1]
    (retried,) = [p for s, p in _finished_events(db) if s.endswith(f"/{task}#2")]
    assert retried["end_reason"] == "answered"
    assert "recorded shared (" in out


def test_an_exec_worker_joins_only_a_run_it_can_share(tmp_path: Path) -> None:
    """Refused in one line, before any browsing: a run of another agent, and a worker that selected other tasks;
    a worker arriving after the run is done records nothing and exits 0."""
    db = tmp_path / "p2w.db"
    endpoint = ("--base-url", "http://127.0.0.1:9/v1", "--model", "m")  # never called: `sleep 0` asks no model
    first = _p2w_rt(db, "record", "--exec", "sleep 0", *endpoint, "--limit", "1", "--label", "w", "--worker")
    assert first.returncode == 0 and "1 no_answer" in first.stdout, first.stderr
    for args, said in (
        (("--exec", "true", "--limit", "1"), "agent 'exec:true' (recorded: 'exec:sleep')"),
        (("--exec", "sleep 0", "--limit", "2"), "records 1 tasks"),
    ):
        done = _p2w_rt(db, "record", *args, *endpoint, "--label", "w", "--worker")
        assert done.returncode == 1 and said in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    late = _p2w_rt(db, "record", "--exec", "sleep 0", *endpoint, "--limit", "1", "--label", "w", "--worker")
    assert late.returncode == 0 and "0 episodes" in late.stdout, late.stdout + late.stderr
    assert len(_query(db, "SELECT 1 FROM events WHERE type = 'episode.started'")) == 1
    assert len(_query(db, "SELECT 1 FROM events WHERE type = 'run.finished'")) == 1
    assert _p2w_rt(db, "verify", "w").returncode == 0
