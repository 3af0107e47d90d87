"""`p2w-rt fork` killed after its run started, then given again: the run it left unfinished under its label is
completed (its half episode closed as ``aborted``, the episode forked again as the task's next attempt) instead of
the label being refused for good. While the first fork still runs the same fork is refused in one line, as is
another fork into that label; a finished fork's label stays refused.

The kill is placed in the live part (the scripted model holds the fork's first live call until the process is
killed), or after the episode ended, when only the run is left to close. The killed process has a TMPDIR of its
own, removed with what it leaves (its scratch folder, Chromium's).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.data import load_tasks
from p2w_runtime.demo.sample import sample_checks, sample_tasks_dir
from p2w_runtime.testing import ScriptedLlm
from p2w_runtime.testing._replies import Delay, Reply, RequestJson, Text
from p2w_runtime.testing.sample_agent import SampleAgentScript
from tests.helpers.suite_tmp import process_tmpdir
from tests.helpers.write_lock_kill import SEALED, kill_once_written

pytestmark = pytest.mark.slow

SOURCE, TASK, FORK = "source", "Priya_Raman_A1", "source-Priya_Raman_A1-at-6"
P2W_RT = str(Path(sys.executable).with_name("p2w-rt"))


def invoke(db: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--db", str(db), *args])
    return result.exit_code, result.stdout, result.stderr


def fork_runs(db: Path) -> list[dict[str, object]]:
    code, out, err = invoke(db, "runs", "--json")
    assert code == 0, err
    return [r for r in map(json.loads, out.splitlines()) if r["label"] == FORK]


def one_line(err: str) -> str:
    assert len(err.strip().splitlines()) == 1, err
    return err


def record_source(db: Path, llm: ScriptedLlm) -> tuple[str, ...]:
    """Record the source run; the fork command of its task at step 6."""
    source = ("--label", SOURCE, "--task", TASK)
    recorded = invoke(db, "record", "--model", "scripted-model", "--base-url", llm.base_url, *source)
    assert recorded[0] == 0, recorded[2]
    return ("fork", SOURCE, TASK, "--at-step", "6", "--base-url", llm.base_url)


class HeldModel:
    """The sample agent's answers, except that while ``holding`` a call is held (answered after ten minutes)."""

    def __init__(self) -> None:
        self.script = SampleAgentScript(load_tasks(sample_tasks_dir()), sample_checks())
        self.holding = False

    def __call__(self, request: RequestJson) -> Reply | str:
        return Delay(600, Text("too late")) if self.holding else self.script(request)


def test_a_fork_killed_after_its_run_started_is_completed_by_the_same_fork_given_again(tmp_path: Path) -> None:
    db, model = tmp_path / "runs.db", HeldModel()
    with ScriptedLlm() as llm:
        llm.handle_with(model)
        fork = record_source(db, llm)

        model.holding, asked = True, len(llm.chat_requests)
        with process_tmpdir() as tmp:
            env = {**os.environ, "TMPDIR": str(tmp)}
            args = [P2W_RT, "--db", str(db), *fork]
            proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp, env=env)
            try:
                deadline = time.monotonic() + 240
                while len(llm.chat_requests) == asked and proc.poll() is None and time.monotonic() < deadline:
                    time.sleep(0.05)
                assert proc.poll() is None and len(llm.chat_requests) > asked, "no live call before the fork ended"
                code, _, err = invoke(db, *fork)
                assert code != 0 and "is being recorded by another process" in one_line(err), err
                assert "give the same fork again once that one has ended" in err
            finally:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
        model.holding = False

        [left] = fork_runs(db)
        assert (left["status"], left["episodes"], left["attempts"]) == ("unfinished", 0, 1), left
        code, _, err = invoke(db, *fork[:4], "5", "--label", FORK, *fork[5:])
        assert code != 0 and "at step 6 by scripted-model (on-demand), left unfinished, not" in one_line(err), err
        assert "give that fork again to complete it, or choose another --label" in err

        code, out, err = invoke(db, *fork)
        assert code == 0, err
        assert f"into {FORK} ({left['run_id']})" in out and "answered after 11 steps" in out
        assert "completed the run the same fork left unfinished, 1 half episode aborted" in out

    [done] = fork_runs(db)
    assert (done["status"], done["episodes"], done["attempts"]) == ("completed", 1, 2), done
    code, out, _ = invoke(db, "show", FORK, TASK, "--json")
    started = json.loads(out.splitlines()[0])
    assert started["type"] == "episode.started" and started["payload"]["fork"]["at_step"] == 6
    assert started["stream"].endswith(f"/{TASK}#2"), "forked again as the task's next attempt"
    assert json.loads(invoke(db, "verify", "--json")[1])["ok"]

    code, _, err = invoke(db, *fork)
    assert code != 0 and f"label {FORK!r} is already used" in one_line(err), "finished: its label is taken"


def test_a_fork_killed_after_its_episode_ended_has_its_run_closed_by_the_same_fork_given_again(tmp_path: Path) -> None:
    """Killed between its sealed episode and ``run.finished``: the test holds SQLite's write lock from the moment it
    finds the seal, so the run cannot be closed before the kill."""
    db, model = tmp_path / "runs.db", HeldModel()
    with ScriptedLlm() as llm:
        llm.handle_with(model)
        fork = record_source(db, llm)
        with process_tmpdir() as tmp:
            env = {**os.environ, "TMPDIR": str(tmp)}
            args = [P2W_RT, "--db", str(db), *fork]
            proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp, env=env)
            kill_once_written(proc, db, SEALED, (FORK, "episode.sealed"))
        [left] = fork_runs(db)
        assert (left["status"], left["episodes"]) == ("unfinished", 1), left

        code, out, err = invoke(db, *fork)
    assert code == 0, err
    assert out.startswith(f"{FORK} ({left['run_id']}) had recorded its fork of ") and "answered after 11 steps" in out
    assert out.rstrip().endswith("before it was stopped: the run is closed now")
    [done] = fork_runs(db)
    assert (done["status"], done["episodes"], done["attempts"]) == ("completed", 1, 1), "nothing forked twice"
    assert json.loads(invoke(db, "verify", "--json")[1])["ok"]
