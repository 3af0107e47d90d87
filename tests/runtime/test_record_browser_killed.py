"""Chromium killed (kill -9) in the middle of a recording: the episode it had open ends in error, a new Chromium
takes the next tasks, and the run completes and verifies; when no new one starts, the run is left interrupted for
``record --resume``."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.testing import ScriptedLlm, Text
from tests.helpers.raw_sqlite import raw_sqlite
from tests.helpers.suite_tmp import process_tmpdir

pytestmark = pytest.mark.slow

TASKS = {"Priya_Raman_A3": "open", "Priya_Raman_B3": "kill", "Priya_Raman_C3": "open", "Priya_Raman_D3": "open"}


@pytest.fixture(autouse=True)
def chromium_tmpdir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The temp dir of Playwright's driver and its Chromium: a Chromium killed leaves its socket folder there, and
    its profile when the driver stops a moment after the kill (Chromium's and Playwright's own, not p2w-rt's)."""
    with process_tmpdir() as folder:
        monkeypatch.setenv("TMPDIR", str(folder))
        yield folder


def _tasks(folder: Path) -> Path:
    folder.mkdir()
    for task_id, what in TASKS.items():
        task = {
            "sites": ["search.p2w.test"], "task_id": task_id, "require_login": False, "storage_state": None,
            "start_url": "http://search.p2w.test/", "geolocation": None, "require_reset": False,
            "intent": f"At search.p2w.test, {what} **anything** (Seattle, WA 98101)",
        }  # fmt: skip
        (folder / f"{task_id}.json").write_text(json.dumps(task))
    return folder


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(child) for child in path.read_text().split()] if path.exists() else []


def kill_chromium() -> list[int]:
    """SIGKILL the browser process of every Chromium this process started (a child of its Playwright driver)."""
    killed = []
    for driver in _children(os.getpid()):
        for child in _children(driver):
            command = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
            if b"chromium" in command[0] and not any(arg.startswith(b"--type=") for arg in command):
                os.kill(child, signal.SIGKILL)
                killed.append(child)
    return killed


def planner_killing_chromium(llm: ScriptedLlm) -> list[int]:
    """Script ``llm`` to stop at once, except on the task that says ``kill``: its planner kills Chromium first."""
    killed: list[int] = []

    def planner(request: dict) -> Text:
        user = request["messages"][-1]["content"]
        if ", kill **" in user and not killed:
            killed.extend(kill_chromium())
            return Text("Thought: look again\nAction: ```scroll [down]```")
        return Text("Thought: done\nAction: ```stop [done]```")

    llm.handle_with(planner)
    return killed


def record(db: Path, llm: ScriptedLlm, *args: str):
    base = ["--db", str(db), "record", "--base-url", llm.base_url, "--api-key", "sk-x", "--concurrency", "1"]
    return CliRunner().invoke(main, [*base, *args])


def test_a_killed_chromium_ends_its_episode_and_the_run_goes_on(tmp_path: Path, scripted_llm: ScriptedLlm) -> None:
    killed = planner_killing_chromium(scripted_llm)
    db = tmp_path / "r.db"
    tasks = str(_tasks(tmp_path / "tasks"))
    result = record(
        db, scripted_llm, "--model", "scripted-model", "--scheme", "no-history", "--tasks", tasks, "--label", "killed"
    )
    assert killed, "the planner of the second task killed Chromium"
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    with raw_sqlite(db) as conn:
        rows = conn.execute("SELECT stream, payload FROM events WHERE type='episode.finished'").fetchall()
    ends = {stream.split("/")[1]: json.loads(payload) for stream, payload in rows}
    assert {task: end["end_reason"] for task, end in ends.items()} == {
        "Priya_Raman_A3": "answered", "Priya_Raman_B3": "error", "Priya_Raman_C3": "answered",
        "Priya_Raman_D3": "answered",
    }  # fmt: skip
    assert ends["Priya_Raman_B3"]["detail"].startswith("Chromium exited during the episode"), ends["Priya_Raman_B3"]
    assert run_status(db) == ("completed", len(TASKS))
    assert CliRunner().invoke(main, ["--db", str(db), "verify"]).exit_code == 0


def run_status(db: Path) -> tuple[str, int]:
    runs = CliRunner().invoke(main, ["--db", str(db), "runs", "--json"])
    (run,) = [json.loads(line) for line in runs.output.splitlines()]
    return run["status"], run["episodes"]


def test_a_chromium_that_will_not_start_again_leaves_the_run_to_resume(
    tmp_path: Path, scripted_llm: ScriptedLlm
) -> None:
    killed = planner_killing_chromium(scripted_llm)
    once = tmp_path / "chromium-once"
    once.write_text('#!/bin/sh\n[ -e "$0.used" ] && { echo "refusing to start" >&2; exit 1; }\ntouch "$0.used"\n'
                    'exec /usr/bin/chromium "$@"\n')  # fmt: skip
    once.chmod(0o755)
    db = tmp_path / "r.db"
    tasks = ["--model", "scripted-model", "--scheme", "no-history", "--tasks", str(_tasks(tmp_path / "tasks"))]
    result = record(db, scripted_llm, *tasks, "--label", "once", "--chromium", str(once))
    assert killed and result.exit_code != 0, result.output
    assert "failed to start" in result.output and "Traceback" not in result.output, result.output
    assert run_status(db)[0] == "interrupted", "tasks are left unrecorded: never completed"
    Path(f"{once}.used").unlink()
    resumed = record(db, scripted_llm, "--resume", "once", "--chromium", str(once))
    assert resumed.exit_code == 0, resumed.output
    assert run_status(db) == ("completed", len(TASKS))
    assert CliRunner().invoke(main, ["--db", str(db), "verify"]).exit_code == 0
