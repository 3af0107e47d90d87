"""`p2w-rt rerun` and `p2w-rt fork`: the agent's own loop re-executed over a recorded run, with no browser
and no LLM, or up to step K and live from there.

One run is recorded once (real Chromium, demo sites, the scripted model); every test works on a copy of it.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import p2w_runtime.agent._episode as episode_module
from p2w_rt.cli import main
from p2w_runtime.agent import AGENT_NAME, prompts
from p2w_runtime.data import load_tasks
from p2w_runtime.demo.sample import sample_checks, sample_history_dir, sample_tasks_dir
from p2w_runtime.errors import UserError
from p2w_runtime.rerun import ForkRequest, ForkSummary, fork, har_has_bodies
from p2w_runtime.store import open_store
from p2w_runtime.testing import HttpError, ScriptedLlm
from p2w_runtime.testing.episodes import EpisodeBuilder
from p2w_runtime.testing.sample_agent import SampleAgentScript
from tests.helpers.classify_builders import add_run
from tests.helpers.raw_sqlite import raw_sqlite

TASKS = ("Priya_Raman_A1", "Lena_Fischer_A3")
LABEL = "source"


def agent_script() -> SampleAgentScript:
    return SampleAgentScript(load_tasks(sample_tasks_dir()), sample_checks())


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("recorded") / "rec.db"
    with ScriptedLlm() as llm:
        llm.handle_with(agent_script())
        tasks = [arg for task in TASKS for arg in ("--task", task)]
        args = ["record", "--model", "scripted-model", "--base-url", llm.base_url, "--label", LABEL, *tasks]
        result = invoke(db, *args)
        assert result.exit_code == 0, result.output
        pre = ["record", "--model", "scripted-model", "--base-url", llm.base_url, "--label", "pre"]
        result = invoke(db, *pre, "--scheme", "pre-execution", "--task", "Lena_Fischer_A1")
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


def run_stream(db: Path, label: str) -> tuple[list[str], int]:
    """The event types in a run's own stream, and how many of its events `verify` finds after the last seal."""
    report = json.loads(invoke(db, "verify", label, "--json").stdout)
    with raw_sqlite(db) as conn:
        rows = conn.execute("SELECT type FROM events WHERE stream = ? ORDER BY seq", (report["run_id"],)).fetchall()
    (tail,) = report["uncovered"]
    return [t for (t,) in rows], tail["events"]


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
    assert text.exit_code == 0 and f"{TASKS[0]}: identical" in text.output and "1 episode, 1 identical" in text.output


def test_pre_execution_run_reruns_identically(db: Path) -> None:
    result = invoke(db, "rerun", "pre", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["identical"]


def test_code_that_ends_sooner_mismatches_as_ends_earlier(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(episode_module, "repeated_action", lambda actions, limit: True)
    code, report = rerun_json(db, TASKS[0])
    assert code == 1
    mismatch = report["episodes"][0]["mismatch"]
    assert (mismatch["kind"], mismatch["step"]) == ("ends earlier", 1)
    assert mismatch["recorded"].startswith("answered after 11 steps")
    assert mismatch["reexecuted"] == "repeated_action after 1 step"


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
    seals = ["episode.sealed"] * len(TASKS)
    assert run_stream(db, "again") == (["run.started", *seals, "run.finished"], 0), "each copied episode sealed"
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


def test_fork_restores_the_page_of_step_k_and_continues_live(db: Path) -> None:
    source = timeline(db, LABEL, TASKS[0])
    at = next(e for e in source if e["type"] == "observation" and e["payload"]["step"] == 6)
    with ScriptedLlm() as llm:
        llm.handle_with(agent_script())
        forked = invoke(db, "fork", LABEL, TASKS[0], "--at-step", "6", "--base-url", llm.base_url, "--label", "f6")
        live_steps = [r["messages"][1]["content"].count("CURRENT PAGE (step ") for r in llm.chat_requests]
    assert forked.exit_code == 0, forked.output
    assert "at step 6 into f6" in forked.output and "answered after 11 steps" in forked.output
    assert "restored by replay-actions" in forked.output, "the source kept no HAR bodies: actions are re-played"
    assert len(live_steps) == 6, "steps 1-5 were answered from the recording, 6 to 11 live"
    events = timeline(db, "f6", TASKS[0])
    spent, served = map(int, re.findall(r"(\d+) tokens spent \((\d+) more served from the recording", forked.output)[0])

    def tokens(calls: list[dict]) -> int:
        return sum(c["payload"]["usage"]["total_tokens"] for c in calls if c["payload"].get("usage"))

    calls = [e for e in events if e["type"] == "llm.call"]
    prefix = [e for e in source if e["type"] == "llm.call" and e["payload"]["step"] < 6]
    assert served == tokens(prefix) > 0 and spent == tokens(calls) - served > 0, "a fork counts only what it spent"
    started = events[0]
    assert started["payload"]["fork"] == {
        "source_stream": source[0]["stream"],
        "at_step": 6,
        "source_event_id": at["event_id"],
    }
    assert started["causation_id"] == at["event_id"]
    decided = [(e["type"], e["payload"].get("raw")) for e in events if e["type"] in ("action", "history.query")]
    recorded = [(e["type"], e["payload"].get("raw")) for e in source if e["type"] in ("action", "history.query")]
    assert decided[: len(decided) - 2] == recorded[: len(decided) - 2], "the prefix decisions are the recorded ones"
    assert events[-1]["payload"]["final_url"] == "http://threads.p2w.test/cart", "live, it added the item too"
    assert json.loads(invoke(db, "verify", "--json").stdout)["ok"]
    assert run_stream(db, "f6") == (["run.started", "episode.sealed", "run.finished"], 0), "the forked episode sealed"
    assert invoke(db, "rerun", "f6").exit_code == 0, "a fork reruns identically like any recorded run"

    diffed = invoke(db, "diff", LABEL, "f6", "--json")
    assert diffed.exit_code == 0, diffed.output
    (task,) = json.loads(diffed.stdout)["tasks"]
    assert (task["task_id"], task["fork_step"], task["first_divergence"]) == (TASKS[0], 6, None)
    shown = invoke(db, "diff", LABEL, "f6")
    assert f"compared from the step they went live: {TASKS[0]} after fork step 6" in " ".join(shown.output.split())


def test_fork_names_the_step_whose_page_cannot_be_reached(db: Path, tmp_path: Path) -> None:
    b = EpisodeBuilder("broken", "Priya_Raman_A1", query="q", start_url="http://search.p2w.test/")
    b.observation(1, "http://search.p2w.test/")
    b.action(1, "goto", "http://basket.p2w.test/search?q=penne")
    b.observation(2, "http://threads.p2w.test/elsewhere")
    b.action(2, "stop", "done")
    b.finish("answered", "done", steps=2)

    async def add() -> None:
        async with open_store(db) as store:
            await add_run(store, "broken", [b], run_id="broken", agent=AGENT_NAME)

    asyncio.run(add())
    runs_before = store_size(db)
    history = str(sample_history_dir())
    nowhere = "http://127.0.0.1:9/v1"  # never called: the fork stops while restoring the browser
    failed = invoke(
        db, "fork", "broken", "Priya_Raman_A1", "--at-step", "2", "--history", history, "--base-url", nowhere
    )
    assert failed.exit_code == 1
    assert failed.stderr.strip() == (
        "error: cannot fork broken/Priya_Raman_A1 at step 2: step 2's recorded page "
        "http://threads.p2w.test/elsewhere was not reached (the browser is on http://basket.p2w.test/search?q=penne)"
    )
    assert store_size(db) == runs_before, "nothing is written when the page cannot be restored"
    beyond = invoke(db, "fork", LABEL, TASKS[0], "--at-step", "12")
    assert beyond.exit_code == 1 and "observed steps 1..11; --at-step 12 is not one of them" in beyond.stderr
    no_history = invoke(db, "fork", LABEL, TASKS[0], "--at-step", "6", "--scheme", "no-history")
    assert no_history.exit_code == 1 and "asked the history at step 1" in no_history.stderr


def test_fork_whose_live_step_fails_says_how_many_steps_it_replayed(db: Path) -> None:
    script, live_answers = agent_script(), iter([True])
    refused = HttpError(401, "bad key")
    with ScriptedLlm() as llm:
        llm.script(refused)  # the first live call: step 6's planner
        first = invoke(db, "fork", LABEL, TASKS[0], "--at-step", "6", "--base-url", llm.base_url, "--label", "f6")
        llm.handle_with(lambda request: script(request) if next(live_answers, False) else refused)  # step 7 fails
        later = invoke(db, "fork", LABEL, TASKS[0], "--at-step", "6", "--base-url", llm.base_url, "--label", "f7")
    for result, failed in ((first, "step 6 (the first live step) failed"), (later, "step 7 failed")):
        assert result.exit_code == 1, result.output
        told = f"error: the forked episode failed: 5 steps replayed from the source, then {failed}: LLM endpoint "
        (line,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
        assert line.startswith(told) and line.endswith("HTTP 401: bad key"), line
        assert f": 5 steps replayed from the source, then {failed}, " in result.stdout
    ended = timeline(db, "f6", TASKS[0])[-1]
    assert (ended["type"], ended["payload"]["end_reason"]) == ("episode.finished", "error"), "the failure is recorded"


@pytest.fixture(scope="module")
def recorded_with_har(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("recorded-har") / "har.db"
    with ScriptedLlm() as llm:
        llm.handle_with(agent_script())
        args = ["record", "--model", "scripted-model", "--base-url", llm.base_url, "--label", "har-source", "--har"]
        result = invoke(db, *args, "--task", TASKS[0])
        assert result.exit_code == 0, result.output
    return db


def final_har(db: Path, run: str) -> bytes:
    final = next(e for e in timeline(db, run, TASKS[0]) if e["type"] == "final_state")

    async def read() -> bytes:
        async with open_store(db) as store:
            return await store.get_blob(final["payload"]["har"])

    return asyncio.run(read())


def test_fork_restores_from_the_recorded_har_when_the_sites_are_gone(recorded_with_har: Path, tmp_path: Path) -> None:
    db = tmp_path / "har.db"
    shutil.copy(recorded_with_har, db)
    assert har_has_bodies(final_har(db, "har-source")), "record --har keeps the response bodies"
    source = timeline(db, "har-source", TASKS[0])
    at_k = next(e for e in source if e["type"] == "observation" and e["payload"]["step"] == 11)

    async def fork_offline(restore: str | None, label: str) -> ForkSummary:
        # no hosting: the demo sites are not served, so only the HAR can bring pages back
        async with open_store(db) as store:
            request = ForkRequest("har-source", TASKS[0], 11, base_url=llm.base_url, label=label, restore=restore)  # type: ignore[arg-type]  # a Restore
            return await fork(store, request, hosting=None)

    with ScriptedLlm() as llm:
        llm.handle_with(agent_script())
        with pytest.raises(UserError, match="cannot fork .* at step 11: the start page http://search.p2w.test/"):
            asyncio.run(fork_offline("replay-actions", "offline-replay"))
        summary = asyncio.run(fork_offline(None, "offline-har"))
        live = [r["messages"][1]["content"] for r in llm.chat_requests]
    assert summary.restore == "har", "the default follows what the source recorded"
    assert (summary.outcome.end_reason, summary.outcome.steps) == ("answered", 11)
    assert len(live) == 1 and "CURRENT PAGE (step 11" in live[0], "steps 1-10 from the recording, step 11 live"
    forked = timeline(db, "offline-har", TASKS[0])
    reached = next(e for e in forked if e["type"] == "observation" and e["payload"]["step"] == 11)
    assert reached["payload"]["url"] == at_k["payload"]["url"]
    assert reached["payload"]["title"] == at_k["payload"]["title"] and at_k["payload"]["title"]
    assert reached["payload"]["ax_tree"] == at_k["payload"]["ax_tree"], (
        "the page of step 11 (the cart) came from the HAR"
    )
    assert forked[0]["payload"]["fork"]["at_step"] == 11


def test_restore_har_without_a_recorded_har_is_one_line(db: Path) -> None:
    assert not har_has_bodies(final_har(db, LABEL)), "a plain record keeps no bodies"
    runs_before = store_size(db)
    refused = invoke(db, "fork", LABEL, TASKS[0], "--at-step", "6", "--restore", "har")
    assert refused.exit_code == 1
    assert refused.stderr.strip() == (
        f"error: episode {timeline(db, LABEL, TASKS[0])[0]['stream']} has no HAR with response bodies "
        "(record it with `record --har`); use --restore replay-actions"
    )
    assert store_size(db) == runs_before
