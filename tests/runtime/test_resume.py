"""`record --resume` continues the same run, and every command counts the same episode of each task.

The main fixture is a real one: a `p2w-rt record --level 2 --limit 3` subprocess, killed with
SIGKILL while its second episode runs, then resumed with nothing but `--resume` (scripted LLM,
real Chromium on the demo sites).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.schemas import NewEvent, RunFinished, uuid7
from p2w_runtime.agent._run import NewRun, plan_run
from p2w_runtime.data import load_tasks
from p2w_runtime.demo.sample import sample_checks, sample_tasks_dir
from p2w_runtime.domain import episodes_of, find_run, list_runs, resuming
from p2w_runtime.store import open_store
from p2w_runtime.testing import ScriptedLlm
from p2w_runtime.testing.episodes import EpisodeBuilder
from p2w_runtime.testing.sample_agent import SampleAgentScript
from tests.helpers.builders import run_started
from tests.helpers.paths import REPO
from tests.helpers.raw_sqlite import raw_sqlite

LEVEL_2 = ["Lena_Fischer_A1", "Lena_Fischer_B1", "Lena_Fischer_C1"]
"""What `--level 2 --limit 3` selects from the sample tasks (the first three of level 2)."""
EPISODES_AS_ROWS = True
"""These tests read the recorded events with SQL (``conftest._episodes_as_rows``)."""


def cli(db: Path, *args: str):
    return CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)


def rows(db: Path, sql: str) -> list[tuple]:
    with raw_sqlite(db) as conn:
        return conn.execute(sql).fetchall()


def _count(db: Path, sql: str) -> int:
    try:
        return rows(db, sql)[0][0]
    except sqlite3.Error:
        return 0


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLlm]:
    """The scripted model errs on one task (shops on the wrong site), so the run's SR is 2/3, not 1."""
    tasks = load_tasks(sample_tasks_dir())
    with ScriptedLlm() as server:
        server.handle_with(SampleAgentScript(tasks, sample_checks(), slips={"Lena_Fischer_C": "wrong_site"}))
        yield server


@pytest.fixture(scope="module")
def resumed(tmp_path_factory: pytest.TempPathFactory, llm: ScriptedLlm) -> Path:
    """A `--level 2 --limit 3` run killed -9 during its second episode, then resumed by label alone."""
    tmp = tmp_path_factory.mktemp("resume")
    db, prices = tmp / "r.db", tmp / "prices.json"
    prices.write_text(json.dumps({"scripted-model": {"input_per_1k": 0.01, "output_per_1k": 0.03}}))
    args = ["--db", str(db), "record", "--model", "scripted-model", "--base-url", llm.base_url, "--api-key", "sk-x"]
    args += ["--prices", str(prices)]
    args += ["--scheme", "on-demand", "--level", "2", "--limit", "3", "--concurrency", "1", "--label", "killed"]
    proc = subprocess.Popen(
        [sys.executable, "-c", "from p2w_rt.cli import main; main()", *args],
        cwd=tmp,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        finished = _count(db, "SELECT count(*) FROM events WHERE type='episode.finished'")
        started = _count(db, "SELECT count(*) FROM events WHERE type='episode.started'")
        if finished >= 1 and started >= 2:
            break
        time.sleep(0.1)
    assert proc.poll() is None, proc.stderr.read().decode()[-2000:] if proc.stderr else ""
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert _count(db, "SELECT count(*) FROM events WHERE type='run.finished'") == 0
    result = cli(
        db, "record", "--resume", "killed", "--base-url", llm.base_url, "--api-key", "sk-x", "--prices", str(prices)
    )
    assert result.exit_code == 0, result.output
    return db


def test_resume_records_only_the_unfinished_tasks_of_the_recorded_selection(resumed: Path):
    started = [
        json.loads(p)["task_id"] for (p,) in rows(resumed, "SELECT payload FROM events WHERE type='episode.started'")
    ]
    assert sorted(set(started)) == LEVEL_2  # not the 36 sample tasks, not the 12 of level 2
    assert len(started) == len(LEVEL_2) + 1  # the killed attempt, recorded again as TASK#2
    ends = {
        s.split("/")[1]: json.loads(p)
        for s, p in rows(resumed, "SELECT stream, payload FROM events WHERE type='episode.finished'")
    }
    aborted = [e for e, p in ends.items() if p["end_reason"] == "aborted"]
    assert len(aborted) == 1 and ends[f"{aborted[0]}#2"]["end_reason"] == "answered"
    assert cli(resumed, "verify").exit_code == 0


def test_runs_show_metrics_diff_stats_classify_count_the_same_episodes(resumed: Path, tmp_path: Path):
    (run,) = [json.loads(line) for line in cli(resumed, "runs", "--json").output.splitlines()]
    assert (run["status"], run["episodes"], run["attempts"]) == ("completed", 3, 4)
    shown = [json.loads(line) for line in cli(resumed, "show", "killed", "--json").output.splitlines()]
    assert sorted(s["task_id"] for s in shown) == LEVEL_2 and {s["end_reason"] for s in shown} == {"answered"}
    assert cli(resumed, "replay", "killed", "--judge", "rubric-rules").exit_code == 0

    metrics = cli(resumed, "metrics", "killed", "--judge", "rubric-rules", "--format", "json")
    (row,) = [json.loads(line) for line in metrics.output.splitlines() if line.startswith("{")]
    diff = json.loads(cli(resumed, "diff", "killed", "killed", "--json").output)
    copy = tmp_path / "copy.db"  # stats needs two runs, and refuses one run named twice: its copy is another
    shutil.copy(resumed, copy)
    stats = json.loads(cli(resumed, "stats", "killed", f"{copy}:killed", "--json").output)
    figures = {
        "metrics": (row["episodes"], round(row["success_rate"], 3), round(row["intent"], 3)),
        "diff": (
            diff["paired_tasks"],
            round(diff["metrics"]["success_rate"]["a"], 3),
            round(diff["metrics"]["intent"]["a"], 3),
        ),
        "stats": (stats["tasks"], round(stats["mean"]["success_rate"], 3), round(stats["mean"]["intent"], 3)),
    }
    # the wrong-site slip ends on another shop's cart: Intent 0 by E.3 (the goal page is on another site)
    assert set(figures.values()) == {(3, 0.667, 0.667)}, figures
    classified = cli(resumed, "classify", "killed", "--classifier", "rules", "--json")
    assert len([line for line in classified.output.splitlines() if line.startswith("{")]) == 3


def test_show_task_shows_its_counted_attempt_and_an_earlier_one_by_name(resumed: Path):
    ends = dict(
        rows(resumed, "SELECT stream, json_extract(payload, '$.end_reason') FROM events WHERE type='episode.finished'")
    )
    (killed,) = [s.split("/")[1] for s, reason in ends.items() if reason == "aborted"]
    counted = [json.loads(line) for line in cli(resumed, "show", "killed", killed, "--json").output.splitlines()]
    assert counted[0]["stream"].endswith(f"{killed}#2")
    earlier = [json.loads(line) for line in cli(resumed, "show", "killed", f"{killed}#1", "--json").output.splitlines()]
    assert earlier[0]["stream"].endswith(f"/{killed}") and earlier[-1]["payload"]["end_reason"] == "aborted"
    table = cli(resumed, "show", "killed")
    assert f"not counted (a later attempt or none finished): {killed} (aborted)" in table.output


def test_export_then_import_keeps_every_attempt_and_the_same_counted_episodes(resumed: Path, tmp_path: Path):
    bundle = tmp_path / "killed.p2w"
    assert cli(resumed, "export", "killed", "-o", str(bundle)).exit_code == 0
    other = tmp_path / "other.db"
    assert cli(other, "import", str(bundle)).exit_code == 0
    (run,) = [json.loads(line) for line in cli(other, "runs", "--json").output.splitlines()]
    assert (run["episodes"], run["attempts"]) == (3, 4)


def test_resume_refuses_options_that_change_the_run_and_records_nothing(resumed: Path, llm: ScriptedLlm):
    before = rows(resumed, "SELECT count(*), max(position) FROM events")
    result = cli(
        resumed, "record", "--resume", "killed", "--level", "1", "--limit", "5", "--model", "other-model",
        "--base-url", llm.base_url, "--concurrency", "2",
    )  # fmt: skip
    assert result.exit_code == 1 and "Traceback" not in result.output
    (line,) = result.output.strip().splitlines()
    assert "'killed'" in line and "--level 1 (recorded: 2)" in line and "--limit 5 (recorded: 3)" in line
    assert "--model other-model (recorded: scripted-model)" in line and "--concurrency 2" not in line.split(";")[0]
    assert rows(resumed, "SELECT count(*), max(position) FROM events") == before


def test_resuming_a_finished_run_again_records_nothing_new(resumed: Path, llm: ScriptedLlm):
    attempts = _count(resumed, "SELECT count(*) FROM events WHERE type='episode.started'")
    result = cli(resumed, "record", "--resume", "killed", "--base-url", llm.base_url, "--concurrency", "2")
    assert result.exit_code == 0 and "0 episodes, 3 kept from before" in result.output
    assert _count(resumed, "SELECT count(*) FROM events WHERE type='episode.started'") == attempts


def test_a_resume_of_a_run_another_process_resumes_is_refused_and_records_nothing(resumed: Path, llm: ScriptedLlm):
    held, done = threading.Event(), threading.Event()

    async def hold() -> None:  # the other process's resume, holding the run for as long as the test needs
        async with open_store(resumed) as store, resuming(store, await find_run(store, "killed")):
            held.set()
            await asyncio.to_thread(done.wait)

    other = threading.Thread(target=asyncio.run, args=(hold(),))
    other.start()
    try:
        assert held.wait(30)
        before = rows(resumed, "SELECT count(*), max(position) FROM events")
        result = cli(resumed, "record", "--resume", "killed", "--base-url", llm.base_url)
    finally:
        done.set()
        other.join()
    assert result.exit_code != 0 and "Traceback" not in result.output
    (line,) = result.output.strip().splitlines()
    assert line.startswith("error: run 'killed' is being recorded by another process (process "), line
    assert rows(resumed, "SELECT count(*), max(position) FROM events") == before


def _attempt(run_id: str, episode_id: str, end_reason: str | None) -> list[NewEvent]:
    b = EpisodeBuilder(run_id, episode_id.split("#")[0], query="q", episode_id=episode_id)
    if end_reason is not None:
        b.finish(end_reason)
    return b.events


async def test_the_latest_attempt_that_finished_by_itself_counts_and_resume_redoes_the_rest(store):
    tasks = load_tasks(sample_tasks_dir())
    a, b, c = (tasks.get(t) for t in LEVEL_2)
    run_id = uuid7()
    await store.append([run_started(run_id, "mixed")])
    for episode_id, end in [
        (a.task_id, "aborted"),  # closed by an earlier resume
        (f"{a.task_id}#2", "answered"),
        (b.task_id, "error"),
        (f"{b.task_id}#2", None),  # killed while running
        (c.task_id, "aborted"),  # Ctrl-C: the recorder stopped, the agent did not end
    ]:
        await store.append(_attempt(run_id, episode_id, end))
    await store.append([NewEvent(stream=run_id, payload=RunFinished(status="interrupted", episodes=2))])

    refs = await episodes_of(store, run_id)
    assert [r.stream.split("/")[1] for r in refs] == [f"{a.task_id}#2", b.task_id]
    (info,) = await list_runs(store)
    assert (info.episodes, info.attempts, info.status) == (2, 5, "interrupted")

    new = NewRun([a, b, c], tasks, label="mixed", model="m", config=None, run_config={})  # type: ignore[arg-type]
    plan = await plan_run(store, new, resume=info)
    assert [episode_id for _, episode_id in plan.todo] == [f"{c.task_id}#2"]
    assert [r.task_id for r in plan.kept] == [a.task_id, b.task_id]
    ends = {r.stream.split("/")[1]: r.end_reason for r in await episodes_of(store, run_id, every_attempt=True)}
    assert ends[f"{b.task_id}#2"] == "aborted"  # closed, so it never counts nor dangles


def test_runs_and_runs_json_name_an_unfinished_run_alike(tmp_path: Path):
    import asyncio

    from p2w_runtime.store import open_store

    async def build() -> None:
        async with open_store(tmp_path / "u.db") as s:
            await s.append([run_started(uuid7(), "cut")])

    asyncio.run(build())
    (run,) = [json.loads(line) for line in cli(tmp_path / "u.db", "runs", "--json").output.splitlines()]
    table = cli(tmp_path / "u.db", "runs").output
    assert run["status"] == "unfinished" and "unfin" in table and "running" not in table  # the table may truncate


def test_record_without_model_or_resume_is_a_usage_error(tmp_path: Path):
    result = cli(tmp_path / "n.db", "record", "--task", "Lena_Fischer_A1")
    assert result.exit_code == 2 and "--model" in result.output and not (tmp_path / "n.db").exists()


def test_the_resumed_runs_cost_is_every_attempts_not_only_the_last_sessions(resumed: Path):
    # the run.finished of the fixture's resume (other tests of this module may resume the run again), and what came
    # before it
    ((at, finished),) = rows(
        resumed, "SELECT position, payload FROM events WHERE type='run.finished' ORDER BY position LIMIT 1"
    )
    sql = f"SELECT payload FROM events WHERE type='episode.finished' AND position < {at}"
    ended = [json.loads(p) for (p,) in rows(resumed, sql)]
    # the attempt killed -9 is closed as aborted, with no cost to report; the others report theirs
    assert [e["end_reason"] == "aborted" for e in ended].count(True) == 1
    costs = [e["cost_usd"] for e in ended if e["end_reason"] != "aborted"]
    assert len(costs) == 3 and all(c > 0 for c in costs)
    assert json.loads(finished)["cost_usd"] == pytest.approx(sum(costs))  # the killed session's episode too
