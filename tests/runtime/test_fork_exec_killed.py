"""`p2w-rt fork --exec` stopped after its agent's run started, then given again: the run left under its label is
completed (its half episode closed as ``aborted``, the episode forked again as the task's next attempt by the agent)
instead of the label being refused for good, as the own agent's fork does (tests/runtime/test_fork_killed.py).

The example agent (examples/replayable_agent.py) is recorded once; each fork holds its first live call (the live model
answers it after ten minutes) until p2w-rt is stopped, or, to stop it after its episode ended, holds SQLite's write
lock from the moment the episode is sealed. The agent dies with p2w-rt (``_group_watch.py``). The forks have a TMPDIR
of the test's, removed with what the killed ones leave; the agent's Chromium is given it too, as under the folder
p2w-rt makes for the agent in it its socket's path would be longer than the 107 bytes a socket path may have.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.domain import episodes_of
from p2w_runtime.store import open_store
from p2w_runtime.testing import Delay, ScriptedLlm, Text
from p2w_runtime.testing._replies import Reply, RequestJson
from tests.helpers.replayable_example import EXAMPLE, TASK, record_example
from tests.helpers.suite_tmp import process_tmpdir
from tests.helpers.write_lock_kill import SEALED, kill_once_written

pytestmark = pytest.mark.slow  # Chromium, and the embedder once while recording

P2W_RT = str(Path(sys.executable).with_name("p2w-rt"))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The example agent's run 'mine', recorded once against the scripted model."""
    db = tmp_path_factory.mktemp("fork-exec") / "p2w.db"
    record_example(db)
    yield db


class LiveModel:
    """Steps 3 and 4 of the fork (open the first result, then stop), except that while ``holding`` a call is held."""

    def __init__(self) -> None:
        self.holding = True

    def __call__(self, request: RequestJson) -> Reply | str:
        if self.holding:
            return Delay(600, Text("too late"))
        on_results = "search?q=" in json.dumps(request["messages"])
        return Text("Thought: live.\nAction: open [1]" if on_results else "Thought: live.\nAction: stop [penne]")


def invoke(db: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--db", str(db), *args])
    return result.exit_code, result.stdout, result.stderr


def labelled(db: Path, label: str) -> dict[str, object]:
    code, out, err = invoke(db, "runs", "--json")
    assert code == 0, err
    [run] = [r for r in map(json.loads, out.splitlines()) if r["label"] == label]
    return run


def attempts_ended(db: Path, run_id: str) -> list[str | None]:
    """How each attempt of run ``run_id`` ended (None: not ended)."""

    async def read() -> list[str | None]:
        async with open_store(db) as store:
            return [ref.end_reason for ref in await episodes_of(store, run_id, every_attempt=True)]

    return asyncio.run(read())


def one_line(err: str) -> str:
    assert len(err.strip().splitlines()) == 1, err
    return err


def fork_args(db: Path, llm: ScriptedLlm, label: str, tmp: Path) -> tuple[str, ...]:
    python, example = shlex.quote(sys.executable), shlex.quote(str(EXAMPLE))
    agent = f"TMPDIR={shlex.quote(str(tmp))} {python} {example} --db {shlex.quote(str(db))}"
    live = ("--base-url", llm.base_url, "--model", "live-model", "--label", label)
    return ("fork", "mine", TASK, "--at-step", "3", "--exec", agent, *live)


def started(db: Path, fork: tuple[str, ...], tmp: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "TMPDIR": str(tmp)}
    args = [P2W_RT, "--db", str(db), *fork]
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp, env=env)


def wait_for_live_call(proc: subprocess.Popen[bytes], llm: ScriptedLlm) -> None:
    deadline = time.monotonic() + 240
    while not llm.chat_requests and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None and llm.chat_requests, "no live call before the fork ended"


def completed_again(db: Path, fork: tuple[str, ...], label: str, left: dict[str, object], aborted: str) -> None:
    """The same fork given again completes the run ``left``: its episode forked again as the task's attempt 2, after
    ``aborted`` half episodes were closed as such."""
    code, out, err = invoke(db, *fork)
    assert code == 0, err
    assert f"into {label} ({left['run_id']})" in out and "1 episode, completed; the agent exited 0" in out
    assert f"completed the run the same fork left unfinished, {aborted} aborted" in out
    done = labelled(db, label)
    assert (done["status"], done["episodes"], done["attempts"]) == ("completed", 1, 2), done
    assert attempts_ended(db, str(left["run_id"])) == ["aborted", "answered"]
    code, out, _ = invoke(db, "show", label, TASK, "--json")
    first = json.loads(out.splitlines()[0])
    assert first["type"] == "episode.started" and first["payload"]["fork"]["at_step"] == 3
    assert first["stream"].endswith(f"/{TASK}#2"), "forked again as the task's next attempt"
    assert json.loads(invoke(db, "verify", "--json")[1])["ok"]
    code, _, err = invoke(db, *fork)
    assert code != 0 and f"label {label!r} is already used" in one_line(err), "finished: its label is taken"


def test_a_fork_exec_killed_after_its_run_started_is_completed_by_the_same_fork_given_again(recorded: Path) -> None:
    label, live = "killed", LiveModel()
    with ScriptedLlm() as llm, process_tmpdir() as tmp:
        llm.handle_with(live)
        fork = fork_args(recorded, llm, label, tmp)
        proc = started(recorded, fork, tmp)
        try:
            wait_for_live_call(proc, llm)
            code, _, err = invoke(recorded, *fork)
            assert code != 0 and "is being recorded by another process" in one_line(err), err
            assert "give the same fork again once that one has ended" in err
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        left = labelled(recorded, label)
        assert (left["status"], left["episodes"], left["attempts"]) == ("unfinished", 0, 1), left

        code, _, err = invoke(recorded, *fork[:4], "2", *fork[5:])
        assert code != 0 and "at step 3 by replayable-example with live-model, left unfinished, not" in one_line(err)
        assert "give that fork again to complete it, or choose another --label" in err

        live.holding = False
        completed_again(recorded, fork, label, left, "1 half episode")


def test_a_fork_exec_stopped_by_ctrl_c_is_closed_interrupted_then_completed_by_the_same_fork(recorded: Path) -> None:
    label, live = "ctrl-c", LiveModel()
    with ScriptedLlm() as llm, process_tmpdir() as tmp:
        llm.handle_with(live)
        fork = fork_args(recorded, llm, label, tmp)
        proc = started(recorded, fork, tmp)
        try:
            wait_for_live_call(proc, llm)
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=120) != 0
        finally:
            proc.kill()
            proc.wait()
        left = labelled(recorded, label)
        assert (left["status"], left["episodes"], left["attempts"]) == ("interrupted", 0, 1), left
        assert attempts_ended(recorded, str(left["run_id"])) == ["aborted"], "its half episode closed"
        live.holding = False
        completed_again(recorded, fork, label, left, "0 half episodes")  # closed at Ctrl-C already


def test_a_fork_exec_killed_after_its_episode_ended_has_its_run_closed_by_the_same_fork(recorded: Path) -> None:
    """Killed between its sealed episode and ``run.finished``: the test holds SQLite's write lock from the moment it
    finds the seal, so the agent cannot close the run before the kill."""
    label, live = "ended", LiveModel()
    live.holding = False
    with ScriptedLlm() as llm, process_tmpdir() as tmp:
        llm.handle_with(live)
        fork = fork_args(recorded, llm, label, tmp)
        proc = started(recorded, fork, tmp)
        kill_once_written(proc, recorded, SEALED, (label, "episode.sealed"))
        left = labelled(recorded, label)
        assert (left["status"], left["episodes"]) == ("unfinished", 1), left

        code, out, err = invoke(recorded, *fork)
    assert code == 0, err
    assert out.startswith(f"{label} ({left['run_id']}) had recorded its fork of ") and "(answered after 4 steps)" in out
    assert out.rstrip().endswith("before it was stopped: the run is closed now")
    done = labelled(recorded, label)
    assert (done["status"], done["episodes"], done["attempts"]) == ("completed", 1, 1), "nothing forked twice"
    assert json.loads(invoke(recorded, "verify", "--json")[1])["ok"]
