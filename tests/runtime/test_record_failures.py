"""What recording does when the endpoint or the page misbehaves, and when the recorder itself is killed."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.agent.prompts import PLANNER_MARKER
from p2w_runtime.data import load_tasks
from p2w_runtime.demo.sample import sample_checks, sample_tasks_dir
from p2w_runtime.testing import Delay, Garbage, HttpError, ScriptedLlm, Text, system_contains
from p2w_runtime.testing.sample_agent import SampleAgentScript
from tests.helpers.raw_sqlite import raw_sqlite

FAST = ("--max-retries", "1", "--scheme", "no-history")
EPISODES_AS_ROWS = True
"""These tests read the recorded events with SQL (``conftest._episodes_as_rows``)."""


def record(db: Path, base_url: str, *args: str):
    return CliRunner().invoke(
        main,
        ["--db", str(db), "record", "--model", "scripted-model", "--base-url", base_url, "--api-key", "sk-x", *args],
        catch_exceptions=False,
    )


def finished_episodes(db: Path) -> list[dict]:
    with raw_sqlite(db) as conn:
        rows = conn.execute("SELECT stream, payload FROM events WHERE type='episode.finished' ORDER BY position")
        return [{"stream": s, **json.loads(p)} for s, p in rows]


def llm_calls(db: Path) -> list[dict]:
    with raw_sqlite(db) as conn:
        return [json.loads(p) for (p,) in conn.execute("SELECT payload FROM events WHERE type='llm.call'")]


def test_server_errors_end_each_episode_with_error_and_the_run_goes_on(tmp_path: Path, scripted_llm: ScriptedLlm):
    scripted_llm.rule(system_contains(PLANNER_MARKER), HttpError(500, "upstream exploded"))
    db = tmp_path / "r.db"
    result = record(db, scripted_llm.base_url, *FAST, "--task", "Lena_Fischer_A3", "--task", "Lena_Fischer_B3")
    assert result.exit_code == 1
    assert "every episode failed" in result.output and "500" in result.output
    ends = finished_episodes(db)
    assert [e["end_reason"] for e in ends] == ["error", "error"], "both episodes ran and were closed"
    calls = llm_calls(db)
    assert len(calls) == 4 and all(c["error"] and "500" in c["error"] for c in calls), "2 attempts per episode"
    assert [c["attempt"] for c in calls].count(2) == 2
    assert CliRunner().invoke(main, ["--db", str(db), "verify"]).exit_code == 0


def test_a_model_failing_at_step_3_records_the_2_steps_before_it(tmp_path: Path, scripted_llm: ScriptedLlm):
    scripted_llm.script(
        Text("Thought: open the shop\nAction: ```goto [http://basket.p2w.test/]```"),
        Text("Thought: search\nAction: ```goto [http://basket.p2w.test/search?q=penne]```"),
        HttpError(500, "upstream exploded"),  # step 3's planner, both attempts
        HttpError(500, "upstream exploded"),
    )
    db = tmp_path / "r.db"
    result = record(db, scripted_llm.base_url, *FAST, "--label", "failing", "--task", "Priya_Raman_A1")
    assert result.exit_code == 1 and "Priya_Raman_A1: error, 2 steps" in result.output, result.output
    (end,) = finished_episodes(db)
    assert (end["end_reason"], end["steps"]) == ("error", 2), "the steps completed before the failing one, as blocked"
    shown = CliRunner().invoke(main, ["--db", str(db), "show", "failing"], terminal_width=200)
    (row,) = [line for line in shown.output.splitlines() if "Priya_Raman_A1" in line]
    assert [cell.strip() for cell in row.split("│")[1:5]] == ["Priya_Raman_A1", "2", "error", "2"], shown.output
    timeline = CliRunner().invoke(main, ["--db", str(db), "show", "failing", "Priya_Raman_A1"], terminal_width=200)
    assert "error after 2 steps" in timeline.output, timeline.output


def test_garbage_and_timeouts_are_recorded_attempts(tmp_path: Path, scripted_llm: ScriptedLlm):
    scripted_llm.script(Garbage("<html>proxy error</html>"), Delay(3.0, Text("too late")))
    db = tmp_path / "r.db"
    result = record(db, scripted_llm.base_url, *FAST, "--llm-timeout", "1", "--task", "Lena_Fischer_A3")
    assert result.exit_code == 1
    errors = [c["error"] for c in llm_calls(db)]
    assert len(errors) == 2 and "JSON" in errors[0] or "json" in errors[0].lower()
    assert "timed out" in errors[1].lower() or "timeout" in errors[1].lower()
    assert finished_episodes(db)[0]["end_reason"] == "error"


def test_endpoint_down_is_one_clear_error(tmp_path: Path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    db = tmp_path / "r.db"
    result = record(db, f"http://127.0.0.1:{port}/v1", *FAST, "--task", "Lena_Fischer_A3")
    assert result.exit_code == 1 and f"127.0.0.1:{port}" in result.output and "Traceback" not in result.output
    assert finished_episodes(db)[0]["end_reason"] == "error"
    (run,) = [
        json.loads(line) for line in CliRunner().invoke(main, ["--db", str(db), "runs", "--json"]).output.splitlines()
    ]
    assert run["status"] == "failed"  # every episode failed: nothing was measured, so not `completed`
    assert "failed" in CliRunner().invoke(main, ["--db", str(db), "runs"]).output


def _one_task(tmp_path: Path, intent: str) -> Path:
    folder = tmp_path / "tasks"
    folder.mkdir()
    task = {
        "sites": ["search.p2w.test"],
        "task_id": "Priya_Raman_Z3",
        "require_login": False,
        "storage_state": None,
        "start_url": "http://search.p2w.test/",
        "geolocation": None,
        "intent": f"Query: {intent}",
        "require_reset": False,
    }
    (folder / "Priya_Raman_Z3.json").write_text(json.dumps(task))
    return folder


def test_a_hanging_page_is_stopped_and_a_blocking_page_ends_the_episode(tmp_path: Path, scripted_llm: ScriptedLlm):
    tasks = _one_task(tmp_path, "At threads.p2w.test, find **anything** (Seattle, WA 98101)")
    scripted_llm.script(
        Text("Thought: open the slow page\nAction: ```goto [http://threads.p2w.test/slow?seconds=60]```"),
        Text("Thought: try another page\nAction: ```goto [http://threads.p2w.test/blocked]```"),
    )
    db = tmp_path / "r.db"
    result = record(db, scripted_llm.base_url, *FAST, "--tasks", str(tasks), "--page-timeout", "2")
    assert result.exit_code == 0, result.output
    with raw_sqlite(db) as conn:
        actions = [json.loads(p) for (p,) in conn.execute("SELECT payload FROM events WHERE type='action'")]
    assert actions[0]["status"] == "executed" and "timed out" in actions[0]["error"], (
        "the timeout is recorded on the action"
    )
    (end,) = finished_episodes(db)
    assert end["end_reason"] == "blocked" and end["detail"]


def test_final_confirmation_is_never_pressed(tmp_path: Path, scripted_llm: ScriptedLlm):
    tasks = _one_task(tmp_path, "At tablefor.p2w.test, reserve **a table** (Seattle, WA 98101)")

    def planner(request: dict) -> Text:
        """Search, open a time slot, then try to press the final confirm button."""
        lines = request["messages"][-1]["content"].splitlines()
        confirm = [line for line in lines if "Confirm reservation" in line]
        slot = [line for line in lines if "link" in line and re.search(r"\b\d{1,2}:\d\d\b", line)]
        for found, why in ((confirm, "confirm it"), (slot, "take this time")):
            if found:
                element = re.search(r"\[(\d+)\]", found[0]).group(1)
                return Text(f"Thought: {why}\nAction: ```click [{element}]```")
        return Text("Thought: search\nAction: ```goto [http://tablefor.p2w.test/search?city=Seattle&party=2]```")

    scripted_llm.handle_with(planner)
    db = tmp_path / "r.db"
    record(db, scripted_llm.base_url, *FAST, "--tasks", str(tasks), "--max-steps", "5")
    with raw_sqlite(db) as conn:
        actions = [json.loads(p) for (p,) in conn.execute("SELECT payload FROM events WHERE type='action'")]
        urls = [json.loads(p)["url"] for (p,) in conn.execute("SELECT payload FROM events WHERE type='observation'")]
    refused = [a for a in actions if a["status"] == "blocked"]
    assert refused and "final confirmation" in refused[0]["error"].lower(), actions
    assert not any("/reserve/confirm" in url for url in urls), "the confirmation page was never reached"


def test_kill_9_mid_run_then_resume(tmp_path: Path):
    db = tmp_path / "r.db"
    tasks = ["Lena_Fischer_A3", "Lena_Fischer_B3", "Marcus_Okafor_A3", "Marcus_Okafor_B3"]
    script = SampleAgentScript(load_tasks(sample_tasks_dir()), sample_checks())
    with ScriptedLlm() as llm:
        llm.handle_with(script)
        args = [
            sys.executable,
            "-m",
            "cli_entry",
            "--db",
            str(db),
            "record",
            "--model",
            "scripted-model",
            "--base-url",
            llm.base_url,
            "--api-key",
            "sk-x",
            "--scheme",
            "no-history",
            "--concurrency",
            "1",
            "--label",
            "killed",
        ] + [a for t in tasks for a in ("--task", t)]
        proc = subprocess.Popen(
            args[:1] + ["-c", "from p2w_rt.cli import main; main()"] + args[3:],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ},
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if db.exists() and len(_safe_finished(db)) >= 1 and _has_second_episode(db):
                break
            time.sleep(0.2)
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert CliRunner().invoke(main, ["--db", str(db), "verify"]).exit_code == 0
        before = finished_episodes(db)
        assert 1 <= len(before) < len(tasks)
        resumed = record(db, llm.base_url, "--resume", "killed", *[a for t in tasks for a in ("--task", t)])
        assert resumed.exit_code == 0, resumed.output
    ends = finished_episodes(db)
    answered = {e["stream"].split("/")[1].split("#")[0] for e in ends if e["end_reason"] == "answered"}
    assert answered == set(tasks)
    aborted = [e for e in ends if e["end_reason"] == "aborted"]
    assert len(aborted) == 1 and aborted[0]["detail"] == "unfinished when the run was resumed"
    assert CliRunner().invoke(main, ["--db", str(db), "verify"]).exit_code == 0
    runs = CliRunner().invoke(main, ["--db", str(db), "runs", "--json"])
    (run,) = [json.loads(line) for line in runs.output.splitlines()]
    assert run["status"] == "completed" and (run["episodes"], run["attempts"]) == (len(tasks), len(tasks) + 1)


def _safe_finished(db: Path) -> list[dict]:
    try:
        return finished_episodes(db)
    except sqlite3.Error:
        return []


def _has_second_episode(db: Path) -> bool:
    try:
        with raw_sqlite(db) as conn:
            return conn.execute("SELECT count(*) FROM events WHERE type='episode.started'").fetchone()[0] >= 2
    except sqlite3.Error:
        return False
