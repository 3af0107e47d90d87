"""Recorders that join one run through the API (`open_run(join=True)`) each hold a presence claim
(`join/LABEL/OWNER`) until their close. A lone resume meanwhile, a script's `open_run(resume=True)` or `p2w-rt record
--resume`, is refused in one line naming them, writing nothing (before, it closed their live attempts as aborted and
recorded their tasks again beside them); a joiner's close finishes the run only when it is the last one recording
(before, the first close wrote `run.finished` while the others still recorded). A joiner killed -9 counts no longer.
Real processes on one SQLite file."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from p2w_rt.schemas import RunFinished
from p2w_runtime.domain import episodes_of, list_runs
from p2w_runtime.errors import UserError
from p2w_runtime.store import EventStore, open_store
from tests.helpers.exec_support import p2w_rt
from tests.helpers.joining_child import TASK_IDS, open_shared
from tests.helpers.paths import HELPERS, REPO
from tests.helpers.seals_support import rows

EVENTS = "SELECT count(*), max(position) FROM events"
FIRST, SECOND = TASK_IDS


@contextmanager
def _joiners(db: Path, label: str) -> Iterator[list[subprocess.Popen[str]]]:
    """Two processes joined to run ``label``, each inside an episode of a task of its own; killed at the end."""
    started = [
        subprocess.Popen(
            [sys.executable, str(HELPERS / "joining_child.py"), str(db), label, task],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )  # fmt: skip
        for task in TASK_IDS
    ]
    try:
        for child in started:
            assert child.stdout is not None and child.stdout.readline().strip() == "READY"
        yield started
    finally:
        for child in started:
            child.kill()
            child.wait()


def _close(child: subprocess.Popen[str]) -> str:
    """Let ``child`` end its episode and close; what it says its close returned."""
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write("\n")
    child.stdin.flush()
    said = child.stdout.readline().strip()
    assert child.wait() == 0
    return said


def _named(said: str, *children: subprocess.Popen[str]) -> set[int]:
    """Which of ``children`` the one-line refusal ``said`` names."""
    assert "\n" not in said and "is being recorded by workers" in said, said
    return {c.pid for c in children if f"process {c.pid} on {socket.gethostname()}" in said}


async def _refused_resume(db: Path, label: str) -> str:
    """A script's resume of ``label``: refused, nothing written; its message."""
    before = rows(db, EVENTS)
    async with open_store(db) as store:
        with pytest.raises(UserError) as refused:
            await open_shared(store, label, resume=True)
    assert rows(db, EVENTS) == before
    return str(refused.value)


async def _finished(store: EventStore, run_id: str) -> list[tuple[str, int]]:
    payloads = [e.decode_payload() async for e in store.read_stream(run_id)]
    return [(p.status, p.episodes) for p in payloads if isinstance(p, RunFinished)]


@pytest.mark.slow
async def test_a_resume_is_refused_while_recorders_that_joined_the_run_record_it(tmp_path: Path) -> None:
    db, agent = tmp_path / "p2w.db", tmp_path / "wait.sh"
    agent.write_text('echo \'{"answer": "ok"}\'\n')
    with _joiners(db, "R") as (first, second):
        said = await _refused_resume(db, "R")
        assert "'R'" in said and _named(said, first, second) == {first.pid, second.pid}
        before = rows(db, EVENTS)
        cli = p2w_rt(db, "record", "--resume", "R", "--exec", f"sh {agent}", "--base-url", "http://127.0.0.1:9/v1")
        assert cli.returncode != 0 and "Traceback" not in cli.stderr, cli.stderr
        (line,) = cli.stderr.strip().splitlines()
        assert line.startswith("error: run 'R'") and _named(line, first, second) == {first.pid, second.pid}
        assert rows(db, EVENTS) == before

        os.kill(second.pid, signal.SIGKILL)  # its claim is stale: it counts no longer
        second.wait()
        assert _named(await _refused_resume(db, "R"), first, second) == {first.pid}
        assert _close(first) == "CLOSED completed 1"  # the last one recording: it finishes the run
    async with open_store(db) as store:
        (info,) = await list_runs(store)
        assert await _finished(store, info.run_id) == [("completed", 1)]
        async with await open_shared(store, "R", resume=True) as resumed:  # nobody records it now
            assert [t.task_id for t in resumed.todo()] == [SECOND]
        attempts = await episodes_of(store, info.run_id, every_attempt=True)
    assert sorted((a.episode_id, a.end_reason) for a in attempts) == [(FIRST, "answered"), (SECOND, "aborted")]


@pytest.mark.slow
async def test_only_the_last_recorder_that_joined_the_run_finishes_it(tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    with _joiners(db, "S") as (first, second):
        assert _close(second) == "CLOSED completed 1"  # what the log says so far, not written
        listed = p2w_rt(db, "runs")
        assert listed.returncode == 0 and "unfinished" in listed.stdout, listed.stdout
        async with open_store(db) as store:
            (info,) = await list_runs(store)
            assert await _finished(store, info.run_id) == []
        assert _close(first) == "CLOSED completed 2"
    async with open_store(db) as store:
        assert await _finished(store, info.run_id) == [("completed", 2)]
    verified = p2w_rt(db, "verify", "S")
    assert verified.returncode == 0 and "0 events not covered by a seal" in verified.stdout, verified.stdout


async def test_joiners_closing_at_once_finish_the_run_once(store: EventStore) -> None:
    """Each leaves under the run's finish claim: of two last ones, the second sees the first gone and finishes it."""
    first, second = await asyncio.gather(*(open_shared(store, "T", join=True) for _ in range(2)))
    for run, task in ((first, FIRST), (second, SECOND)):
        async with run.episode(task) as episode:
            await episode.end("answered", "ok")
    await asyncio.gather(first.close(), second.close())
    assert await _finished(store, first.run_id) == [("completed", 2)]
    async with await open_shared(store, "T", resume=True):  # both gave their presence back
        pass


@pytest.mark.parametrize(("label", "other"), [("U", "U/x"), ("U/x", "U%2Fx")])
async def test_the_joiners_of_another_run_are_not_found_under_this_ones_label(
    store: EventStore, label: str, other: str
) -> None:
    """Presence claims are found by a prefix of the label: ``U/x``'s joiner (or ``U%2Fx``'s, for run ``U/x``) must
    neither keep run ``U`` open nor refuse its resume."""
    elsewhere = await open_shared(store, other, join=True)  # still recording its own run
    run = await open_shared(store, label, join=True)
    async with run.episode(FIRST) as episode:
        await episode.end("answered", "ok")
    await run.close()
    assert await _finished(store, run.run_id) == [("completed", 1)]
    async with await open_shared(store, label, resume=True) as resumed:
        assert [t.task_id for t in resumed.todo()] == [SECOND]
    await elsewhere.close()
