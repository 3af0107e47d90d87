"""Piped (not a terminal, as under CliRunner), `rerun`, `import-trajectories`, `migrate` and `fork` say each
finished item on stderr as a numbered line, where a bar would draw nothing."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import p2w_runtime.agent._episode as episode_module
from p2w_rt.cli import main
from p2w_rt.schemas import uuid7
from p2w_runtime.data import load_tasks
from p2w_runtime.demo.sample import sample_checks, sample_tasks_dir
from p2w_runtime.domain import episodes_of, find_run
from p2w_runtime.store import open_store
from p2w_runtime.testing import ScriptedLlm
from p2w_runtime.testing.episodes import EpisodeBuilder, run_finished, run_started
from p2w_runtime.testing.sample_agent import SampleAgentScript
from tests.helpers.paths import DATA

TASKS = ("Priya_Raman_A1", "Lena_Fischer_A3")
FIXTURES = DATA / "fixture_dbs"


def invoke(db: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)


def told(result: Result) -> list[str]:
    """The numbered progress lines on stderr (log records, if any, are not numbered)."""
    return [line for line in result.stderr.splitlines() if re.match(r"\[\d+(/\d+)?\] ", line)]


def script() -> SampleAgentScript:
    return SampleAgentScript(load_tasks(sample_tasks_dir()), sample_checks())


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("recorded") / "rec.db"
    with ScriptedLlm() as llm:
        llm.handle_with(script())
        tasks = [arg for task in TASKS for arg in ("--task", task)]
        result = invoke(db, "record", "--model", "scripted-model", "--base-url", llm.base_url, "--label", "src", *tasks)
    assert result.exit_code == 0, result.output
    lines = told(result)  # record's own lines, in the order the episodes finished
    assert [line[:6] for line in lines] == ["[1/2] ", "[2/2] "]
    assert sorted(line[6:].split(":")[0] for line in lines) == sorted(TASKS)
    return db


@pytest.fixture
def db(recorded: Path, tmp_path: Path) -> Path:
    return Path(shutil.copy(recorded, tmp_path / "rec.db"))


def test_rerun_says_each_re_executed_episode_identical_or_where_it_differs(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    same = invoke(db, "rerun", "src", "--json")
    assert same.exit_code == 0, same.output
    order = [e["task_id"] for e in json.loads(same.stdout)["episodes"]]  # stdout keeps the report, parseable
    assert sorted(order) == sorted(TASKS)
    assert told(same) == [f"[1] {order[0]}: identical", f"[2] {order[1]}: identical"]
    monkeypatch.setattr(episode_module, "repeated_action", lambda actions, limit: True)
    differs = invoke(db, "rerun", "src", TASKS[1], "--json")
    assert differs.exit_code == 1
    assert told(differs) == [f"[1] {TASKS[1]}: differs at step 1 (ends earlier)"]


def test_fork_says_its_episode_when_it_ends(db: Path) -> None:
    with ScriptedLlm() as llm:
        llm.handle_with(script())
        forked = invoke(db, "fork", "src", TASKS[0], "--at-step", "6", "--base-url", llm.base_url, "--label", "f6")
    assert forked.exit_code == 0, forked.output
    (line,) = told(forked)
    assert re.fullmatch(rf"\[1\] {TASKS[0]}: answered, 11 steps, [1-9]\d* tokens spent \([1-9]\d* served\)", line), line


def test_import_says_each_written_episode_with_its_end_reason_and_steps(tmp_path: Path) -> None:
    db = tmp_path / "imported.db"
    args = ("import-trajectories", "--examples", "--format", "p2w-browser-use", "--label", "bu")
    first = invoke(db, *args)
    assert first.exit_code == 0, first.output

    async def recorded() -> list[str]:
        async with open_store(db, create=False, read_only=True) as store:
            refs = await episodes_of(store, (await find_run(store, "bu")).run_id)
        return [f"{r.task_id}: {r.finished.end_reason}, {r.finished.steps} steps" for r in refs if r.finished]

    expected = asyncio.run(recorded())
    assert len(expected) >= 2 and any(not line.endswith(" 0 steps") for line in expected)
    lines = told(first)
    assert [re.sub(r"^\[\d+\] ", "", line) for line in lines] == expected
    assert [line.split("]")[0] for line in lines] == [f"[{n}" for n in range(1, len(expected) + 1)]
    again = invoke(db, *args)
    assert again.exit_code == 0 and told(again) == [], "nothing written again, nothing said"


def test_migrate_says_each_batch_of_events_in_the_target_out_of_those_it_moves(tmp_path: Path) -> None:
    """The verify mark the source holds stays behind, so it is not in the total; a resumed migration's events
    already in the target count as there, not as copied."""
    source = Path(shutil.copy(FIXTURES / "v1.db", tmp_path / "v1.db"))
    assert invoke(source, "verify").exit_code == 0  # appends a verify mark to the source
    args = ["migrate", "--from", str(source), "--to", str(tmp_path / "to.db")]
    moved = CliRunner().invoke(main, args)
    assert moved.exit_code == 0, moved.output
    assert told(moved) == ["[1] events: 141/141 in the target"]
    again = CliRunner().invoke(main, args)
    assert told(again) == ["[1] events: 141/141 in the target"] and "(0 new, 141 already there)" in again.stdout


def test_migrate_says_a_last_full_batch_once(tmp_path: Path) -> None:
    """1,000 events, one whole batch: one line, not a second one for the empty rest."""
    source = tmp_path / "batch.db"

    async def build() -> int:
        run_id = uuid7()
        b = EpisodeBuilder(run_id, "T1", query="q")
        for step in range(1, 499):
            b.observation(step, f"https://a.example/{step}")
            b.action(step, "click", str(step))
        b.finish("max_steps", steps=498)
        async with open_store(source) as store:
            await store.append([run_started(run_id, "batch"), *b.events, run_finished(run_id, 1)], b.blobs)
            return (await store.count())[0]

    assert asyncio.run(build()) == 1000
    moved = CliRunner().invoke(main, ["migrate", "--from", str(source), "--to", str(tmp_path / "to.db")])
    assert moved.exit_code == 0, moved.output
    assert told(moved) == ["[1] events: 1000/1000 in the target"]
