"""Both runners' output folders, laid out exactly as each runner writes them (``tests/data/runners``), imported
whole: end reasons, summaries and crash files, and what the judges and classifiers make of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from p2w_rt.replay.classify import RulesClassifier
from p2w_rt.replay.derived import PassSettings, run_pass
from p2w_rt.replay.judges import JUDGES, make_judge
from p2w_rt.replay.metrics import collect_scores
from p2w_runtime.domain import find_run
from p2w_runtime.domain.trajectory import load_trajectories
from p2w_runtime.llm import LlmClient, RetryPolicy
from p2w_runtime.store import EventStore
from p2w_runtime.testing import ScriptedLlm
from tests.helpers.import_support import (
    AGENTOCCAM,
    AGENTOCCAM_LOGS,
    BROWSER_USE,
    BROWSER_USE_RESULT,
    EXAMPLES,
    RUNNERS,
    events_of,
    import_folder,
)


@pytest.fixture
def store(memory_store: EventStore) -> EventStore:
    """These tests need a store, not SQL: the in-memory one (docs/design/store.md, "The memory store")."""
    return memory_store


# -- runner folders, laid out exactly as each runner writes them ---------------------------------

FOLDERS = {
    # folder: (format, backbone model, scheme, {task: (end reason, answer)})
    "on-demand_gpt41": (AGENTOCCAM, "gpt-4.1", "on-demand", {
        "Tomas_Reyes_B1": ("answered", "Ridgeline Men's Trail Running Shoes, size 10.5, $119 (under $130), "
                                       "added to the cart"),
        "Lena_Fischer_A1": ("parse_failures", None),
        "Marcus_Okafor_C2": ("parse_failures", None),
        "Priya_Raman_A3": ("max_steps", None),
        "Tomas_Reyes_A2": ("blocked", None),
    }),
    "pre-execution_qwen": (AGENTOCCAM, "qwen3-next-80b-a3b-thinking", "pre-execution", {
        "Priya_Raman_A1": ("answered", "Stride Women's High-Rise Running Leggings, size M, 4.7 stars, $54"),
    }),
    "no-history_gpt41": (AGENTOCCAM, "gpt-4.1", "no-history", {"Lena_Fischer_A3": ("answered", "N/A")}),
    "on-demand_gpt41_1": (BROWSER_USE, "gpt-4.1", "on-demand", {
        "Tomas_Reyes_B1": ("answered", "Added Ridgeline Men's Trail Running Shoes (size 10.5, $119, under $130) "
                                       "to the cart on threads.p2w.test."),
        "Lena_Fischer_B1": ("no_answer", None),
        "Marcus_Okafor_A1": ("error", None),
        "Priya_Raman_C1": ("answered", "Booked the 6:30 pm class."),
    }),
    "pre-execution_llama_2": (BROWSER_USE, "llama3.1:70b", "pre-execution", {
        "Tomas_Reyes_B2": ("answered", "Ridgeline Men's Trail Running Shoes, size 10.5, $119."),
    }),
    "no-history_gpt_4o_3": (BROWSER_USE, "gpt_4o", "no-history", {"Lena_Fischer_C3": ("answered", "Not possible.")}),
    "on-demand_default_1": (BROWSER_USE, "browser-use default model", "on-demand", {
        "Priya_Raman_B1": ("answered", "Booked a table for four."),
    }),
}  # fmt: skip


GOAL_REACHED = {("on-demand_gpt41_1", "Tomas_Reyes_B1")}
"""Episodes whose actions show the query's goal reached (rubric-rules' Intent 10: a click reasoned as adding the pair
to the cart); every other one stops short of its cart / reservation / checkout or only claims it in the answer."""


def runner_folder(name: str) -> Path:
    return (AGENTOCCAM_LOGS if FOLDERS[name][0] == AGENTOCCAM else BROWSER_USE_RESULT) / name


@pytest.mark.parametrize("name", list(FOLDERS))
async def test_runner_folders_import_without_skip_bad_with_their_end_reasons_and_rules_scores(
    store: EventStore, name: str
) -> None:
    fmt, model, scheme, expected = FOLDERS[name]
    report = await import_folder(store, fmt, runner_folder(name))
    assert sorted(report.imported) == sorted(expected) and report.bad == []
    run = await find_run(store, report.run_id)
    assert (run.started.backbone_model, run.started.scheme, run.episodes) == (model, scheme, len(expected))
    ends = {}
    for task in expected:
        finished = (await events_of(store, f"{report.run_id}/{task}"))[-1].payload
        ends[task] = (finished.end_reason, finished.answer)
    assert ends == expected
    reasons: dict[str, int] = {}
    for reason, _ in expected.values():
        reasons[reason] = reasons.get(reason, 0) + 1
    assert run.finished is not None and run.finished.end_reasons == dict(sorted(reasons.items()))

    await run_pass(JUDGES, store, report.run_id, [make_judge("rubric-rules", PassSettings())])
    scores = {s.task_id: s.metrics for s in await collect_scores(store, [run], judge_id="rubric-rules")}
    assert set(scores) == set(expected), "every episode is judged, crashed and stopped ones included"
    for task in expected:
        metrics = scores[task]
        assert metrics is not None
        reached = (name, task) in GOAL_REACHED
        assert (metrics["intent"], metrics["success"]) == ((1.0, 1.0) if reached else (0.0, 0.0)), task


async def test_agentoccam_folder_details_captcha_folder_multi_actor_keys_and_note_then_stop(store: EventStore) -> None:
    report = await import_folder(store, AGENTOCCAM, AGENTOCCAM_LOGS / "on-demand_gpt41")
    blocked = await events_of(store, f"{report.run_id}/Tomas_Reyes_A2")
    assert blocked[0].payload.source_file == "on_gpt41_Tomas_Reyes_A2.json"
    assert blocked[-1].payload.detail == "The page shows a CAPTCHA check; I cannot continue"
    stopped = (await events_of(store, f"{report.run_id}/Marcus_Okafor_C2"))[-1].payload
    assert stopped.detail == "Too many invalid action candidates attempted" and stopped.answer is None
    limit = (await events_of(store, f"{report.run_id}/Priya_Raman_A3"))[-1].payload
    assert (limit.steps, limit.final_url) == (25, "http://threads.p2w.test/"), "step 26 is past max_steps 25"
    answered = await events_of(store, f"{report.run_id}/Tomas_Reyes_B1")
    last_step = [e.payload for e in answered if e.type == "action" and e.payload.step == 8]  # num_actions 8
    assert [(a.raw, a.parsed.name, a.status) for a in last_step] == [
        ("note [Ridgeline, size 10.5, $119]", "note", "executed"),
        (f"stop [{answered[-1].payload.answer}]", "stop", "executed"),
    ]
    assert [e.payload.phase for e in answered if e.type == "history.query"] == ["on-demand"]


async def test_browser_use_folder_crash_records_summary_and_a_crash_superseded_by_a_rerun(store: EventStore) -> None:
    folder = BROWSER_USE_RESULT / "on-demand_gpt41_1"
    report = await import_folder(store, BROWSER_USE, folder)
    assert report.crashed == ["Marcus_Okafor_A1"]
    assert report.superseded == [folder / "Priya_Raman_C1.error.json"]
    crashed = await events_of(store, f"{report.run_id}/Marcus_Okafor_A1")
    assert [e.type for e in crashed] == ["episode.started", "episode.finished"]
    assert crashed[0].payload.source_file == "Marcus_Okafor_A1.error.json"
    end = crashed[-1].payload
    assert (end.end_reason, end.answer, end.steps) == ("error", None, 0)
    assert end.detail == "ModelProviderError: Error code: 429 - Rate limit reached for gpt-4.1"
    run = await find_run(store, report.run_id)
    # the file names carry the tag gpt41; the summary the model's real name
    assert run.started.backbone_model == "gpt-4.1" and run.started.config.model_tag == "gpt41"
    assert run.started.config.extra("experiment_id") == "1" and run.started.config.extra("provider") == "openai"
    assert run.started.config.extra("summary") == "on-demand_gpt41_1/_summary.json"  # names, never a path

    again = await import_folder(store, BROWSER_USE, folder)
    assert again.imported == [] and sorted(again.already) == sorted(FOLDERS["on-demand_gpt41_1"][3])


def test_fixtures_are_what_the_writer_script_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    monkeypatch.syspath_prepend(str(RUNNERS))
    importlib.import_module("make_fixtures").main(tmp_path)
    written = {p.relative_to(tmp_path): p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file()}
    committed = {
        p.relative_to(RUNNERS): p.read_bytes()
        for p in sorted(RUNNERS.rglob("*"))
        if p.is_file() and p.suffix != ".py" and "__pycache__" not in p.parts
    }
    assert written.keys() == committed.keys()
    assert [k for k in written if written[k] != committed[k]] == []


async def test_real_agentoccam_files_have_no_page_text_and_the_rules_classifier_does_not_need_it(
    store: EventStore,
) -> None:
    files = [*AGENTOCCAM_LOGS.rglob("*.json"), *EXAMPLES.trajectories(AGENTOCCAM)]
    assert files and not any(
        key in step for f in files for step in json.loads(f.read_text())["trajectory"]
        for key in ("observation_description", "interaction_history_summary")
    )  # fmt: skip
    report = await import_folder(store, AGENTOCCAM, AGENTOCCAM_LOGS / "on-demand_gpt41")
    labels = {}
    async for t in load_trajectories(store, report.run_id):
        assert all(o.description is None for o in t.observations)
        labels[t.task_id] = sorted(label.label for label in RulesClassifier().label(t).labels)
    # Tomas_Reyes_B1 typed the model number "450" it had noted on the page: a product fact, not a preference
    assert labels == {
        "Tomas_Reyes_B1": [],
        "Lena_Fischer_A1": ["history_retrieval_failure", "parse_failures"],
        "Marcus_Okafor_C2": ["history_retrieval_failure", "parse_failures"],
        "Priya_Raman_A3": ["max_steps"],
        "Tomas_Reyes_A2": ["blocked", "history_retrieval_failure"],
    }


async def test_llm_judges_give_no_intent_to_episodes_without_an_answer(
    store: EventStore, scripted_llm: ScriptedLlm
) -> None:
    def full_marks(request: dict[str, Any]) -> str:
        schema = request["response_format"]["json_schema"]["schema"]["properties"]
        top = {"web": 5, "pref": 2.5, "location": 2.5, "intent": 10}
        return json.dumps({
            name: {"score": top[name.split("_")[0]], "evidence": [], "justification": "looks done"} for name in schema
        })  # fmt: skip

    scripted_llm.handle_with(full_marks)
    report = await import_folder(store, AGENTOCCAM, AGENTOCCAM_LOGS / "on-demand_gpt41")
    client = lambda: LlmClient("gpt-5-mini", base_url=scripted_llm.base_url, api_key="sk-test", retry=RetryPolicy(0))  # noqa: E731
    for judge_id in ("rubric-llm", "action-wise", "outcome-based"):
        await run_pass(JUDGES, store, report.run_id, [make_judge(judge_id, PassSettings())], llm=client)
        run = await find_run(store, report.run_id)
        scores = {s.task_id: s.metrics for s in await collect_scores(store, [run], judge_id=judge_id)}
        figures = {task: (m["intent"], m["success"]) for task, m in scores.items() if m is not None}
        assert figures == {
            "Tomas_Reyes_B1": (1.0, 1.0),
            "Lena_Fischer_A1": (0.0, 0.0),
            "Marcus_Okafor_C2": (0.0, 0.0),
            "Priya_Raman_A3": (0.0, 0.0),
            "Tomas_Reyes_A2": (0.5, 0.0),
        }, judge_id
