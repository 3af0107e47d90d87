"""Importing Persona2Web runner trajectories into a real SQLite store: the events each format becomes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from import_support import (
    AGENTOCCAM,
    AGENTOCCAM_LOGS,
    BROWSER_USE,
    BROWSER_USE_RESULT,
    EXAMPLES,
    RUNNERS,
    bank,
    copy_example,
    events_of,
    import_folder,
    rewrite,
    run_import,
)

from p2w_runtime.data import load_tasks, memory_bank_hash
from p2w_runtime.importers._actions import map_browser_use_action, parse_agentoccam_action
from p2w_runtime.importers._naming import FileName, parse_file_name
from p2w_runtime.llm import LlmClient, RetryPolicy
from p2w_runtime.store import EventStore, find_run
from p2w_runtime.testing import ScriptedLlm
from replay.classify import RulesClassifier
from replay.judges import JudgeSettings, make_judge
from replay.judging import replay_run
from replay.metrics import collect_scores
from replay.trajectory import load_trajectories
from schemas import ParsedAction

# -- AgentOccam ----------------------------------------------------------------------------------


async def test_agentoccam_examples_become_one_run_with_one_episode_per_file(store: EventStore) -> None:
    report = await run_import(store, AGENTOCCAM)
    assert report.imported == ["Jordan_Park_A1", "Mina_Okafor_A2", "Theo_Lindqvist_A1"]
    assert (report.bad, report.already, report.resumed, report.episodes) == ([], [], False, 3)

    run = await events_of(store, report.run_id)
    assert [e.type for e in run] == ["run.started", "run.finished"]
    started, finished = run[0].payload, run[1].payload
    tasks = load_tasks(EXAMPLES.tasks_dir)
    assert (started.source, started.import_format, started.agent) == ("imported", AGENTOCCAM, "agentoccam")
    assert (started.backbone_model, started.scheme, started.label) == ("gpt-4.1", "pre-execution", "demo")
    assert (started.dataset_id, started.dataset_hash) == (tasks.dataset_id, tasks.content_hash)
    assert started.code_version and started.host and started.packages["pydantic"]
    assert finished.status == "completed" and finished.episodes == 3
    assert finished.end_reasons == {"answered": 1, "max_steps": 1, "early_stop": 1}
    info = await find_run(store, "demo")
    assert info.run_id == report.run_id and info.episodes == 3


async def test_agentoccam_episode_event_sequence_and_contents(store: EventStore) -> None:
    report = await run_import(store, AGENTOCCAM)
    events = await events_of(store, f"{report.run_id}/Jordan_Park_A1")
    memory = ["history.query", "history.retrieval", "rationale"]
    step_with_plan = ["observation", "rationale", "rationale", "action"]
    step = ["observation", "rationale", "action"]
    assert [e.type for e in events] == [
        "episode.started",
        *memory,
        *memory,
        *step_with_plan,
        *step,
        *step_with_plan,
        *step,
        *step_with_plan,
        "episode.finished",
    ]
    started = events[0].payload
    assert (started.episode_id, started.task_id, started.persona) == ("Jordan_Park_A1", "Jordan_Park_A1", "Jordan_Park")
    assert (started.query_set, started.level, started.scheme) == ("Jordan_Park_A", 2, "pre-execution")
    assert started.query.startswith("Find trail running shoes in my usual size")
    assert started.source_file == "pre_gpt41_Jordan_Park_A1.json"
    assert started.ground_truth is not None
    assert started.ground_truth.preferences == ["men's 10.5", "Brooks or Hoka", "under $150"]
    assert started.ground_truth.websites == ["rei.com"]

    query, retrieval, answer = events[1:4]
    assert query.payload.step is None and query.payload.phase == "pre-execution"
    assert query.payload.query == "user's trail running shoe size and preferred brands"
    assert retrieval.causation_id == query.event_id and answer.causation_id == retrieval.event_id
    entries = bank("Jordan_Park")
    hits = retrieval.payload.hits
    assert [(h.entry_id, h.rank, h.score) for h in hits] == [(2, 1, None), (16, 2, None), (11, 3, None), (3, 4, None)]
    assert [h.entry for h in hits] == [entries[2], entries[16], entries[11], entries[3]]
    assert hits[0].entry.object.startswith("Brooks Cascadia 17 trail running shoes, men's 10.5")
    assert retrieval.payload.step is None and retrieval.payload.index_hash == memory_bank_hash(entries)
    assert answer.payload.source == "generator" and answer.payload.step is None
    assert answer.payload.cited_entry_ids == [2, 16, 11, 3]
    assert answer.payload.text.startswith("The user buys Brooks Cascadia 17")

    first = events[7:11]
    assert first[0].payload.step == 1 and first[0].payload.url == "https://www.bing.com/"
    assert first[0].payload.description is None, "AgentOccam files record no page text"
    assert first[1].payload.text.startswith("Plan: [0] Find trail running shoes")
    assert (first[2].payload.source, first[2].payload.text) == ("planner", "Search for the store first.")
    assert first[3].payload.raw == "type [12] [rei trail running shoes men's 10.5] [1]"
    assert first[3].payload.parsed == ParsedAction(name="type", args=["12", "rei trail running shoes men's 10.5", "1"])
    assert first[3].payload.status == "executed"

    end = events[-1].payload
    assert end.end_reason == "answered" and end.steps == 5
    assert end.answer == "Brooks Cascadia 17 trail running shoes, men's 10.5, $139.95 at rei.com"
    assert end.final_url == "https://www.rei.com/product/215563/brooks-cascadia-17-trail-running-shoes-mens"


async def test_agentoccam_runner_stop_messages_are_end_reasons_not_answers(store: EventStore) -> None:
    report = await run_import(store, AGENTOCCAM)
    failed = (await events_of(store, f"{report.run_id}/Mina_Okafor_A2"))[-1].payload
    assert (failed.end_reason, failed.answer, failed.steps) == ("max_steps", None, 4)
    assert failed.detail == "Trajectory failed: reached the maximum number of steps without completing the task"
    early = await events_of(store, f"{report.run_id}/Theo_Lindqvist_A1")
    assert (early[-1].payload.end_reason, early[-1].payload.answer) == ("early_stop", None)
    empty_retrieval = [e for e in early if e.type == "history.retrieval"][1]
    assert empty_retrieval.payload.hits == []
    assert early[0].payload.ground_truth.location.city == "Chicago"


@pytest.mark.parametrize(
    ("final", "reason", "answer"),
    [
        ("stop [Too many invalid actions attempted]", "parse_failures", None),
        ("stop [Too many invalid action candidates attempted]", "parse_failures", None),
        ("stop [Trajectory failed: Steps 26 exceeded maximum 25.]", "max_steps", None),
        ("stop [Task automatically stopped due to CAPTCHA or error condition detected]", "blocked", None),
        ("stop [ERROR: the product page did not load]", "answered", "ERROR: the product page did not load"),
        ("stop [N/A]", "answered", "N/A"),
        ("note [Cascadia 17, $139.95]\nstop [Brooks Cascadia 17]", "answered", "Brooks Cascadia 17"),
        ("click [88]", "max_steps", None),
    ],
)
async def test_agentoccam_final_actions(
    tmp_path: Path, store: EventStore, final: str, reason: str, answer: str | None
) -> None:
    path, data = copy_example(tmp_path, AGENTOCCAM, 1)
    data["trajectory"][-1]["action"] = final
    report = await run_import(store, AGENTOCCAM, [rewrite(path, data)])
    end = (await events_of(store, f"{report.run_id}/Mina_Okafor_A2"))[-1].payload
    assert (end.end_reason, end.answer) == (reason, answer)


async def test_unparseable_and_unknown_actions_are_recorded_as_invalid(tmp_path: Path, store: EventStore) -> None:
    path, data = copy_example(tmp_path, AGENTOCCAM, 1)
    data["trajectory"][1]["action"] = "I think I should click the banner"
    data["trajectory"][2]["action"] = "teleport [home]"
    report = await run_import(store, AGENTOCCAM, [rewrite(path, data)])
    actions = [e.payload for e in await events_of(store, f"{report.run_id}/Mina_Okafor_A2") if e.type == "action"]
    assert (actions[1].status, actions[1].parsed) == ("invalid", None)
    assert actions[1].error.startswith("unknown action 'I'; expected one of click")
    assert (actions[2].status, actions[2].parsed) == ("invalid", None)
    assert actions[2].error.startswith("unknown action 'teleport'")


# -- Browser-Use ---------------------------------------------------------------------------------


async def test_browser_use_episode_event_sequence_and_contents(store: EventStore) -> None:
    report = await run_import(store, BROWSER_USE)
    run = await find_run(store, report.run_id)
    assert (run.started.agent, run.started.backbone_model, run.started.scheme) == ("browser-use", "gpt41", "on-demand")
    assert run.finished is not None and run.finished.end_reasons == {"answered": 2, "no_answer": 1}

    events = await events_of(store, f"{report.run_id}/Jordan_Park_B2")
    assert [e.type for e in events] == [
        "episode.started",
        "observation", "rationale", "action",
        "observation", "history.query", "history.retrieval", "rationale",
        "observation", "rationale", "action", "action",
        "observation", "rationale", "action",
        "observation", "rationale", "action",
        "episode.finished",
    ]  # fmt: skip
    assert events[0].payload.level == 1 and events[0].payload.ground_truth.preferences == [
        "2",
        "Italian",
        "Capitol Hill",
    ]
    search = events[3].payload
    assert search.parsed == ParsedAction(name="search", args=["opentable italian capitol hill seattle"])
    assert json.loads(search.raw) == {"action": "search", "query": "opentable italian capitol hill seattle"}
    memory_obs, query, retrieval, answer = events[4:8]
    assert memory_obs.payload.description == "OpenTable Seattle listings with a search box and a date picker."
    assert (query.payload.step, query.payload.phase) == (2, "on-demand")
    assert query.payload.reason == "Which Italian restaurant does the user usually book on Capitol Hill?"
    assert retrieval.causation_id == query.event_id and retrieval.payload.step == 2
    entries = bank("Jordan_Park")
    assert [(h.entry_id, h.rank) for h in retrieval.payload.hits] == [(5, 1), (19, 2), (9, 3)]
    assert [h.entry for h in retrieval.payload.hits] == [entries[5], entries[19], entries[9]]
    assert answer.payload.cited_entry_ids == [5, 19, 9] and answer.causation_id == retrieval.event_id
    assert events[10].payload.parsed == ParsedAction(name="type", args=["14", "Spinasse", "0"])
    assert events[11].payload.parsed == ParsedAction(name="click", args=["15"])
    end = events[-1].payload
    assert end.end_reason == "answered" and end.steps == 5
    assert (
        end.answer == "Found a table for 2 at Spinasse (Italian, Capitol Hill) this Friday at 7:30 pm on opentable.com."
    )


async def test_browser_use_without_done_ends_without_answer(store: EventStore) -> None:
    report = await run_import(store, BROWSER_USE)
    end = (await events_of(store, f"{report.run_id}/Theo_Lindqvist_A2"))[-1].payload
    assert (end.end_reason, end.answer, end.final_url, end.steps) == (
        "no_answer",
        None,
        "https://www.instacart.com/login",
        5,
    )


async def test_browser_use_pre_execution_memory_steps_without_url(tmp_path: Path, store: EventStore) -> None:
    path, data = copy_example(tmp_path, BROWSER_USE, 2, "pre_gpt41_Theo_Lindqvist_A2.json")
    memory = {"step": 1, "url": None, "step_type": "memory", "memory_query": "milk the user buys",
              "retrieved_memory_indices": [9, 1], "memory_answer": "Lactaid 2% or Fairlife 2%."}  # fmt: skip
    navigation = [s | {"step": s["step"] + 1} for s in data if s["step_type"] == "navigation"]
    report = await run_import(store, BROWSER_USE, [rewrite(path, [memory, *navigation])])
    events = await events_of(store, f"{report.run_id}/Theo_Lindqvist_A2")
    assert [e.type for e in events[:5]] == [
        "episode.started",
        "history.query",
        "history.retrieval",
        "rationale",
        "observation",
    ]
    assert events[1].payload.phase == "pre-execution" and events[1].payload.step == 1
    assert [h.entry_id for h in events[2].payload.hits] == [9, 1]


# -- parsing units -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "name", "args"),
    [
        ("type [15] [chinos [slim] 32x32] [0]", "type", ["15", "chinos [slim] 32x32", "0"]),
        ("stop [Trajectory failed: limit [25] reached]", "stop", ["Trajectory failed: limit [25] reached"]),
        ("go_home", "go_home", []),
        ("branch [0] [search [x] on rei]", "branch", ["0", "search [x] on rei"]),
        ("prune [1] [dead end]", "prune", ["1", "dead end"]),
    ],
)
def test_agentoccam_actions_use_the_shared_grammar_plus_agentoccam_planning_actions(
    text: str, name: str, args: list[str]
) -> None:
    assert parse_agentoccam_action(text) == (ParsedAction(name=name, args=args), None)


def test_text_outside_the_grammar_does_not_parse() -> None:
    parsed, error = parse_agentoccam_action("Let me think about it")
    assert parsed is None and error is not None and "unknown action 'Let'" in error
    parsed, error = parse_agentoccam_action("branch [0]")
    assert parsed is None and error == "branch takes 2 bracketed arguments; got 'branch [0]'"


@pytest.mark.parametrize(
    ("action", "name", "args"),
    [
        ({"action": "navigate", "url": "https://x.test/"}, "goto", ["https://x.test/"]),
        ({"action": "input", "element_index": 4, "text": "milk"}, "type", ["4", "milk", "0"]),
        ({"action": "click", "element_index": 9}, "click", ["9"]),
        ({"action": "search", "query": "lactaid"}, "search", ["lactaid"]),
        ({"action": "done", "text": "the answer"}, "stop", ["the answer"]),
        ({"action": "send_keys"}, "press", []),
        ({"action": "scroll"}, "scroll", []),
        ({"action": "go_back"}, "go_back", []),
        ({"action": "switch"}, "tab_focus", []),
        ({"action": "close"}, "close_tab", []),
        ({"action": "select_dropdown", "element_index": 3, "text": "M"}, "select_option", ["3", "M"]),
        ({"action": "extract", "query": "prices"}, "extract", ["prices"]),
    ],
)
def test_browser_use_action_mapping(action: dict[str, Any], name: str, args: list[str]) -> None:
    assert map_browser_use_action(action) == ParsedAction(name=name, args=args)


TASK_IDS = {"Alex_Garcia_A1", "Garcia_A1", "Jo_Li_B3"}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("on_gpt41_Alex_Garcia_A1.json", FileName("on-demand", "gpt41", "Alex_Garcia_A1")),
        ("x/pre_qwen3next80b_Alex_Garcia_A1.json", FileName("pre-execution", "qwen3next80b", "Alex_Garcia_A1")),
        ("base_gpt41_Jo_Li_B3.json", FileName("no-history", "gpt41", "Jo_Li_B3")),
        ("no_gpt_4o_Jo_Li_B3.json", FileName("no-history", "gpt_4o", "Jo_Li_B3")),
        ("on_metallamallama31:70b_Jo_Li_B3.json", FileName("on-demand", "metallamallama31:70b", "Jo_Li_B3")),
        ("on__Alex_Garcia_A1.json", FileName("on-demand", "", "Alex_Garcia_A1")),
        ("pre_x_Garcia_A1.json", FileName("pre-execution", "x", "Garcia_A1")),
        ("Alex_Garcia_A1.json", FileName(None, None, None)),
        ("on_gpt41_Nobody_A1.json", FileName(None, None, None)),
    ],
)  # fmt: skip
def test_file_names_are_parsed_from_the_right_against_the_known_task_ids(name: str, expected: FileName) -> None:
    assert parse_file_name(Path(name), TASK_IDS) == expected


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

    await replay_run(store, report.run_id, [make_judge("rubric-rules", JudgeSettings())])
    scores = {s.task_id: s.metrics for s in await collect_scores(store, [run], judge_id="rubric-rules")}
    assert set(scores) == set(expected), "every episode is judged, crashed and stopped ones included"
    for task, (reason, _) in expected.items():
        metrics = scores[task]
        assert metrics is not None
        if reason != "answered":
            assert (metrics["intent"], metrics["success"]) == (0.0, 0.0), task
        else:
            assert metrics["intent"] == 1.0, task
    assert scores.get("Tomas_Reyes_B1", {"success": 1.0})["success"] == 1.0


async def test_agentoccam_folder_details_captcha_folder_multi_actor_keys_and_note_then_stop(store: EventStore) -> None:
    report = await import_folder(store, AGENTOCCAM, AGENTOCCAM_LOGS / "on-demand_gpt41")
    blocked = await events_of(store, f"{report.run_id}/Tomas_Reyes_A2")
    assert blocked[0].payload.source_file == "on_gpt41_Tomas_Reyes_A2.json"
    assert blocked[-1].payload.detail == "The page shows a CAPTCHA check; I cannot continue"
    stopped = (await events_of(store, f"{report.run_id}/Marcus_Okafor_C2"))[-1].payload
    assert stopped.detail == "Too many invalid action candidates attempted" and stopped.answer is None
    limit = (await events_of(store, f"{report.run_id}/Priya_Raman_A3"))[-1].payload
    assert (limit.steps, limit.final_url) == (26, "http://threads.p2w.test/")
    answered = await events_of(store, f"{report.run_id}/Tomas_Reyes_B1")
    last_step = [e.payload for e in answered if e.type == "action" and e.payload.step == 7]
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
    assert run.started.backbone_model == "gpt-4.1" and run.started.config["model_tag"] == "gpt41"
    assert run.started.config["experiment_id"] == "1" and run.started.config["provider"] == "openai"
    assert run.started.config["summary"] == str(folder / "_summary.json")

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
        await replay_run(store, report.run_id, [make_judge(judge_id, JudgeSettings())], llm=client)
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
