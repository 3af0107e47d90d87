"""Importing Persona2Web runner trajectories into a real SQLite store: the events each format becomes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from p2w_rt.schemas import ParsedAction
from p2w_runtime.data import load_tasks, memory_bank_hash
from p2w_runtime.domain import find_run
from p2w_runtime.importers._actions import map_browser_use_action, parse_agentoccam_action
from p2w_runtime.importers._naming import FileName, parse_file_name
from p2w_runtime.store import EventStore
from tests.helpers.import_support import (
    AGENTOCCAM,
    BROWSER_USE,
    EXAMPLES,
    bank,
    copy_example,
    events_of,
    rewrite,
    run_import,
)


@pytest.fixture
def store(memory_store: EventStore) -> EventStore:
    """These tests need a store, not SQL: the in-memory one (docs/design/store.md, "The memory store")."""
    return memory_store


# -- AgentOccam ----------------------------------------------------------------------------------


async def test_agentoccam_examples_become_one_run_with_one_episode_per_file(store: EventStore) -> None:
    report = await run_import(store, AGENTOCCAM)
    assert report.imported == ["Jordan_Park_A1", "Mina_Okafor_A2", "Theo_Lindqvist_A1"]
    assert (report.bad, report.already, report.resumed, report.episodes) == ([], [], False, 3)

    run = await events_of(store, report.run_id)
    # the three files went in one transaction (BATCH_EVENTS), so one seal covers the three episodes
    assert [e.type for e in run] == ["run.started", "episode.sealed", "run.finished"]
    sealed = {seal.stream: seal.events for seal in run[1].payload.seals}
    assert sealed == {f"{report.run_id}/{task}": n for task, n in zip(report.imported, (26, 17, 20), strict=True)}
    started, finished = run[0].payload, run[-1].payload
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
    step_with_plan = ["observation", "rationale", "action", "rationale"]  # the plan after the step follows it
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
    assert (first[1].payload.source, first[1].payload.text) == ("planner", "Search for the store first.")
    assert first[2].payload.raw == "type [12] [rei trail running shoes men's 10.5] [1]"
    assert first[2].payload.parsed == ParsedAction(name="type", args=["12", "rei trail running shoes men's 10.5", "1"])
    assert first[2].payload.status == "executed"
    assert first[3].payload.text.startswith("Plan after this step: [0] Find trail running shoes")
    assert started.objective is not None and started.objective.startswith("Find Brooks or Hoka trail running shoes")

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
