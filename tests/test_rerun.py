"""`p2w-rt rerun`: the agent's own loop re-executed over a recorded run, with no browser and no LLM.

One run is recorded once (real Chromium, demo sites, the scripted model); every test reruns a copy of it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import p2w_runtime.agent._episode as episode_module
from cli import main
from p2w_runtime.agent import prompts
from p2w_runtime.data import load_tasks
from p2w_runtime.sample import sample_checks, sample_tasks_dir
from p2w_runtime.testing import ScriptedLlm
from p2w_runtime.testing.sample_agent import SampleAgentScript

TASKS = ("Priya_Raman_A1", "Lena_Fischer_A3")
LABEL = "source"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("recorded") / "rec.db"
    with ScriptedLlm() as llm:
        llm.handle_with(SampleAgentScript(load_tasks(sample_tasks_dir()), sample_checks()))
        tasks = [arg for task in TASKS for arg in ("--task", task)]
        args = ["record", "--model", "scripted-model", "--base-url", llm.base_url, "--label", LABEL, *tasks]
        result = invoke(db, *args)
    assert result.exit_code == 0, result.output
    return db


@pytest.fixture
def db(recorded: Path, tmp_path: Path) -> Iterator[Path]:
    copy = tmp_path / "rec.db"
    shutil.copy(recorded, copy)
    yield copy


def invoke(db: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)


def rerun_json(db: Path, *args: str) -> tuple[int, dict]:
    result = invoke(db, "rerun", LABEL, "--json", *args)
    return result.exit_code, json.loads(result.stdout)


def timeline(db: Path, run: str, task: str) -> list[dict]:
    shown = invoke(db, "show", run, task, "--json")
    assert shown.exit_code == 0, shown.output
    return [json.loads(line) for line in shown.output.splitlines()]


def store_size(db: Path) -> list[dict]:
    return [json.loads(line) for line in invoke(db, "runs", "--json").output.splitlines()]


def test_unchanged_code_reruns_identically_and_appends_nothing(db: Path) -> None:
    before = db.read_bytes(), store_size(db)
    code, report = rerun_json(db)
    assert code == 0, report
    assert report["identical"] and [e["task_id"] for e in report["episodes"]] == list(TASKS)
    assert all(e["identical"] and e["mismatch"] is None for e in report["episodes"])
    assert store_size(db) == before[1]
    text = invoke(db, "rerun", LABEL, TASKS[0])
    assert text.exit_code == 0 and f"{TASKS[0]}: identical" in text.output and "1 episodes, 1 identical" in text.output


def test_recorded_retrieval_reruns_identically(db: Path) -> None:
    code, report = rerun_json(db, "--recorded-retrieval", TASKS[0])
    assert code == 0 and report["identical"], report


def test_changed_prompt_template_mismatches_at_its_first_call_with_the_diff(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = timeline(db, LABEL, TASKS[0])
    first_generator = next(e for e in source if e["type"] == "llm.call" and e["payload"]["role"] == "generator")
    monkeypatch.setattr(prompts, "GENERATOR_MARKER", "You are the MEMORY READER")
    code, report = rerun_json(db, TASKS[0])
    assert code == 1
    (episode,) = report["episodes"]
    mismatch = episode["mismatch"]
    assert mismatch["kind"] == "prompt changed"
    assert mismatch["step"] == first_generator["payload"]["step"]
    assert first_generator["payload"]["fingerprint"][:12] in mismatch["recorded"]
    assert "-You are the GENERATOR of a personalized" in mismatch["diff"]
    assert "+You are the MEMORY READER of a personalized" in mismatch["diff"]
    assert "QUESTION:" not in mismatch["diff"].split("@@")[1], "the diff shows the changed lines, not the prompt"
    shown = invoke(db, "rerun", LABEL, TASKS[0])
    assert shown.exit_code == 1 and f"step {mismatch['step']}: prompt changed" in shown.output
    assert "+You are the MEMORY READER" in shown.output


@pytest.mark.parametrize("which", [2, -2], ids=["history-action", "browser-action"])
def test_changed_action_mismatches_at_its_step(db: Path, monkeypatch: pytest.MonkeyPatch, which: int) -> None:
    actions = [e["payload"] for e in timeline(db, LABEL, TASKS[0]) if e["type"] == "action"]
    assert len(actions) >= 5, "the fixture episode asks the history, then browses"
    changed = actions[which]
    real = episode_module.extract_action

    def scroll_instead(reply: str) -> str:  # today's code reads the planner's reply differently at one step
        return "scroll [down]" if f"Action: ```{changed['raw']}```" in reply else real(reply)

    monkeypatch.setattr(episode_module, "extract_action", scroll_instead)
    code, report = rerun_json(db, TASKS[0])
    assert code == 1
    mismatch = report["episodes"][0]["mismatch"]
    assert (mismatch["kind"], mismatch["step"]) == ("action differs", changed["step"])
    assert mismatch["recorded"] == changed["raw"] and mismatch["reexecuted"] == "scroll [down]"


def test_record_as_writes_a_new_run_caused_by_the_source_events(db: Path) -> None:
    code, report = rerun_json(db, "--record-as", "again")
    assert code == 0 and report["recorded_run_id"]
    source = timeline(db, LABEL, TASKS[0])
    again = timeline(db, "again", TASKS[0])
    source_ids = {e["event_id"]: e for e in source}
    assert [e["type"] for e in again] == [e["type"] for e in source]
    for new, old in zip(again, source, strict=True):
        cause = new["causation_id"]
        if old["causation_id"] is None:
            assert source_ids[cause]["type"] == new["type"], new["type"]
        else:  # a cause inside the episode stays inside the new episode
            assert cause in {e["event_id"] for e in again}
    assert json.loads(invoke(db, "verify", "--json").stdout)["ok"]
    code, again_report = rerun_json(db)
    assert code == 0
    assert invoke(db, "rerun", "again").exit_code == 0, "the re-executed run reruns identically too"
    taken = invoke(db, "rerun", LABEL, "--record-as", "again")
    assert taken.exit_code != 0 and "again" in taken.stderr and len(taken.stderr.strip().splitlines()) == 1


def test_imported_runs_and_unknown_tasks_are_refused_in_one_line(db: Path) -> None:
    imported = invoke(db, "import-trajectories", "--examples", "--format", "p2w-browser-use", "--label", "bu")
    assert imported.exit_code == 0, imported.output
    refused = invoke(db, "rerun", "bu")
    assert refused.exit_code != 0
    assert refused.stderr.strip().splitlines() == [refused.stderr.strip()]
    assert "'bu' was imported" in refused.stderr and "no recorded LLM calls" in refused.stderr
    unknown = invoke(db, "rerun", LABEL, "Nobody_X1")
    assert unknown.exit_code != 0 and "no counted episode for task Nobody_X1" in unknown.stderr
