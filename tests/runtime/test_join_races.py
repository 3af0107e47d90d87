"""No recorder slips into a shared run as it is being finished or resumed. A recorder joining through the API
(``open_run(join=True)``) while the last joiner finishes the run either is seen by it (the run stays open) or is told
in one line that the run is finished; before, it got the run and recorded episodes into a run finished under it. A
worker of ``record --worker`` is present in its run from before its check until it ends; before, it held nothing
until its first lease, and a lone ``record --resume`` starting meanwhile was let in beside it."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from p2w_rt.schemas import RunFinished
from p2w_runtime.domain import live_joiners
from p2w_runtime.errors import UserError
from p2w_runtime.recording import Recording
from p2w_runtime.store import EventStore
from p2w_runtime.testing import ScriptedLlm
from tests.helpers.joining_child import TASK_IDS, open_shared
from tests.helpers.paths import REPO
from tests.helpers.sample_llm import sample_agent_llm
from tests.helpers.seals_support import rows

FIRST, SECOND = TASK_IDS
EVENTS = "SELECT count(*), max(position) FROM events"


async def _finished(store: EventStore, run_id: str) -> list[tuple[str, int]]:
    payloads = [e.decode_payload() async for e in store.read_stream(run_id)]
    return [(p.status, p.episodes) for p in payloads if isinstance(p, RunFinished)]


async def test_a_recorder_joining_as_the_last_one_finishes_the_run_is_told_it_is_finished(
    store: EventStore, tmp_path: Path
) -> None:
    """The last joiner gives its presence back and finds nobody left; only then does a second one arrive, and its
    open is under way while the first writes ``run.finished``."""
    first = await open_shared(store, "R", join=True)
    async with first.episode(FIRST) as episode:
        await episode.end("answered", "ok")
    arriving: list[asyncio.Future[Recording]] = []

    async def leave_as_another_arrives() -> bool:
        async with first.leaving():
            pass
        others = bool(await live_joiners(store, "R"))
        arriving.append(asyncio.ensure_future(open_shared(store, "R", join=True)))
        while not await live_joiners(store, "R"):  # present now, and it looked at the run before it was finished
            await asyncio.sleep(0.02)
        return others

    before = rows(tmp_path / "p2w.db", EVENTS)
    assert (await first.run.close_last(leave_as_another_arrives)).status == "completed"
    after = rows(tmp_path / "p2w.db", EVENTS)
    assert after[0][0] > before[0][0]  # the run.finished, its seal
    with pytest.raises(UserError) as refused:
        await arriving[0]
    said = str(refused.value)
    assert "\n" not in said and said.startswith("run 'R' is completed") and "resume=True" in said, said
    assert rows(tmp_path / "p2w.db", EVENTS) == after  # the late joiner wrote nothing
    assert await _finished(store, first.run_id) == [("completed", 1)]
    async with await open_shared(store, "R", resume=True) as resumed:  # its presence is given back
        assert [t.task_id for t in resumed.todo()] == [SECOND]


async def test_joiners_started_again_continue_a_run_their_predecessors_closed_as_interrupted(store: EventStore) -> None:
    """Only a run that ended is closed to joiners: an interrupted one is continued by the next fleet, as a resume
    would continue it, and its last joiner finishes it."""
    first = await open_shared(store, "R", join=True)
    async with first.episode(FIRST) as episode:
        await episode.end("answered", "ok")
    assert (await first.close(interrupted=True)).status == "interrupted"
    async with await open_shared(store, "R", join=True) as again:
        assert [t.task_id for t in again.todo()] == [SECOND]
        async with again.episode(SECOND) as episode:
            await episode.end("answered", "ok")
    assert await _finished(store, first.run_id) == [("interrupted", 1), ("completed", 2)]


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLlm]:
    with sample_agent_llm() as server:
        yield server


@pytest.mark.slow
def test_a_resume_is_refused_while_a_worker_starts_before_its_first_lease(llm: ScriptedLlm, tmp_path: Path) -> None:
    """The worker has joined (the run is started) and hangs in its browser's launch, holding no lease yet."""
    db, launched = tmp_path / "p2w.db", tmp_path / "launched"
    slow_chromium = tmp_path / "chromium"
    slow_chromium.write_text(f'#!/bin/sh\ntouch "{launched}"\nexec sleep 300\n')
    slow_chromium.chmod(0o755)
    args = ["--db", str(db), "record", "--model", "scripted-model", "--base-url", llm.base_url, "--api-key", "sk-x"]
    cli = [sys.executable, "-c", "from p2w_rt.cli import main; main()"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    worker = subprocess.Popen(
        [*cli, *args, "--limit", "1", "--label", "shared", "--worker"],
        cwd=tmp_path, env={**env, "P2W_CHROMIUM": str(slow_chromium)}, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not launched.exists() and worker.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert launched.exists(), worker.stderr.read() if worker.poll() is not None and worker.stderr else "no launch"
        before = rows(db, EVENTS)
        resume = subprocess.run(
            [*cli, *args, "--resume", "shared"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
        assert resume.returncode != 0, resume.stdout + resume.stderr
        (line,) = resume.stderr.strip().splitlines()
        assert line.startswith("error: run 'shared' is being recorded by workers"), line
        assert f"process {worker.pid} on {socket.gethostname()}" in line, line
        assert rows(db, EVENTS) == before
    finally:
        worker.send_signal(signal.SIGINT)  # Ctrl-C: it stops its browser's launch and cleans up after it
        try:
            worker.wait(timeout=60)
        finally:
            worker.kill()
            worker.wait()
