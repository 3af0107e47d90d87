"""`record` sent SIGTERM (what a service manager, `timeout` or a stopping container send) in the middle of an
episode stops as on Ctrl-C: the episode closes as aborted, the run as interrupted, and `record --resume` finishes it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from p2w_runtime.testing import Delay, ScriptedLlm, Text
from tests.helpers.p2w_process import p2w_rt
from tests.helpers.raw_sqlite import raw_sqlite

pytestmark = pytest.mark.slow

TASKS = ("Lena_Fischer_A3", "Lena_Fischer_B3", "Marcus_Okafor_A3")


def test_sigterm_mid_episode_closes_the_run_as_interrupted_and_resume_finishes_it(
    tmp_path: Path, scripted_llm: ScriptedLlm
) -> None:
    recorder: list[subprocess.Popen[str]] = []
    planned: list[str] = []

    def planner(request: dict) -> Text | Delay:
        planned.append(request["messages"][-1]["content"])
        done = Text("Thought: done\nAction: ```stop [done]```")
        if len(planned) == 2 and recorder:  # the second episode's planner is asked: stopped while it waits
            os.kill(recorder[0].pid, signal.SIGTERM)
            return Delay(60, done)
        return done

    scripted_llm.handle_with(planner)
    db = tmp_path / "r.db"
    args = ["record", "--model", "scripted-model", "--base-url", scripted_llm.base_url, "--api-key", "sk-x"]
    args += ["--scheme", "no-history", "--concurrency", "1", "--label", "termed"]
    args += [a for task in TASKS for a in ("--task", task)]
    command = [str(Path(sys.executable).with_name("p2w-rt")), "--db", str(db), *args]
    recorder.append(subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    _, err = recorder[0].communicate(timeout=240)
    assert recorder[0].returncode == 130 and err.rstrip().endswith("interrupted"), err[-2000:]
    with raw_sqlite(db) as conn:
        ends = [json.loads(p) for (p,) in conn.execute("SELECT payload FROM events WHERE type='episode.finished'")]
    assert [e["end_reason"] for e in ends] == ["answered", "aborted"], ends
    runs = p2w_rt(db, "runs", "--json")
    assert json.loads(runs.stdout.splitlines()[0])["status"] == "interrupted", runs.stdout
    resumed = p2w_rt(db, "record", "--resume", "termed", "--base-url", scripted_llm.base_url, "--api-key", "sk-x")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    run = json.loads(p2w_rt(db, "runs", "--json").stdout.splitlines()[0])
    assert (run["status"], run["episodes"]) == ("completed", len(TASKS)), run
    assert p2w_rt(db, "verify").returncode == 0
