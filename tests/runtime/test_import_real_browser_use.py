"""The real Browser-Use runner's own output folder (``tests/data/runners-real/browser-use``), imported end to end.

The folder is what ``browser-use/agent_runner.py`` at ``serin-kimm/Persona2Web@5dee4d5`` wrote, run offline with
its ``browser_use`` laid over browser-use 0.11.2 (provenance in its README). Each expectation is what the runner
and ``browser_use/agent/service.py`` did: a memory step is a step of its own (``_prepare_context`` returns before
the model is asked for an action), a memory check that found nothing leaves no entry, a step whose model call
failed is logged with the previous step's output (``state.last_model_output``), and ``done``'s ``success`` is
only in ``_summary.json``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.schemas import Event
from p2w_runtime.demo.sample import sample_history_dir, sample_tasks_dir
from p2w_runtime.domain import episodes_of
from p2w_runtime.store import EventStore
from tests.helpers.import_support import BROWSER_USE, events_of, import_folder
from tests.helpers.paths import DATA


@pytest.fixture
def store(memory_store: EventStore) -> EventStore:
    """These tests need a store, not SQL: the in-memory one (docs/design/store.md, "The memory store")."""
    return memory_store


REAL = DATA / "runners-real" / "browser-use" / "on-demand_gpt41_1"
TASKS = ["Lena_Fischer_A1", "Marcus_Okafor_A1", "Priya_Raman_A1", "Tomas_Reyes_A1"]
FAILED = "not carried out: the step's model call failed; the runner wrote the previous step's output again"


def _file(task: str) -> list[dict]:
    return json.loads((REAL / f"on_gpt41_{task}.json").read_text(encoding="utf-8"))


def _summary() -> dict[str, dict]:
    records = json.loads((REAL / "_summary.json").read_text(encoding="utf-8"))
    return {Path(r["task_file"]).stem: r for r in records}


def _actions(events: list[Event]) -> list[tuple[int, str, str]]:
    return [(e.payload.step, e.payload.raw, e.payload.status) for e in events if e.type == "action"]


async def _episodes(store: EventStore) -> dict[str, list[Event]]:
    report = await import_folder(store, BROWSER_USE, REAL, label="real")
    assert sorted(report.imported) == TASKS and report.bad == []
    return {ref.task_id: await events_of(store, ref.stream) for ref in await episodes_of(store, report.run_id)}


def test_cli_imports_the_real_folder_and_names_the_failed_steps(tmp_path: Path) -> None:
    args = ["--db", str(tmp_path / "real.db"), "import-trajectories", "--format", BROWSER_USE, "--label", "real"]
    args += ["--tasks", str(sample_tasks_dir()), "--history", str(sample_history_dir()), str(REAL)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1:] == [
        "imported 4, already imported 0, bad 0",
        "Marcus_Okafor_A1: step 3 repeats step 2's output: its model call failed, not run",
        "Marcus_Okafor_A1: step 4 repeats step 3's output: its model call failed, not run",
        "Marcus_Okafor_A1: step 5 repeats step 4's output: its model call failed, not run",
        "Tomas_Reyes_A1: step 3 repeats step 2's output: its model call failed, not run",
    ]


async def test_every_logged_step_is_imported_with_the_runners_numbers(store: EventStore) -> None:
    episodes = await _episodes(store)
    for task, events in episodes.items():
        logged = [s["step"] for s in _file(task)]
        observed = [e.payload.step for e in events if e.type == "observation"]
        assert observed == logged, task
        finished = events[-1].payload
        assert finished.steps == logged[-1], task
        answer = next(a["text"] for a in _file(task)[-1]["actions"] if a["action"] == "done")
        assert (finished.end_reason, finished.answer) == ("answered", answer), task


async def test_memory_steps_carry_query_retrieved_ids_and_answer(store: EventStore) -> None:
    episodes = await _episodes(store)
    accesses = {
        task: [(e.payload.step, e.payload.query) for e in events if e.type == "history.query"]
        for task, events in episodes.items()
    }
    assert accesses == {
        "Priya_Raman_A1": [(1, "where I buy leggings"), (2, "my leggings size")],
        "Tomas_Reyes_A1": [(1, "where I buy show tickets")],
        # its first check asked "my favorite chess opening", found nothing and left no step: the file has one
        "Lena_Fischer_A1": [(2, "my dietary restrictions")],
        "Marcus_Okafor_A1": [(1, "where I buy pants")],
    }
    priya = episodes["Priya_Raman_A1"]
    second = [e for e in priya if getattr(e.payload, "step", None) == 2]
    assert [e.type for e in second] == ["observation", "history.query", "history.retrieval", "rationale"]
    query, retrieval, answer = second[1:]
    assert query.payload.phase == "on-demand"
    assert retrieval.causation_id == query.event_id and answer.causation_id == retrieval.event_id
    assert (
        [h.entry_id for h in retrieval.payload.hits]
        == [60, 323, 0]
        == [int(i) for i in _file("Priya_Raman_A1")[1]["retrieved_memory_indices"]]
    )
    assert "the medium fits perfectly" in retrieval.payload.hits[0].entry.object
    assert (answer.payload.source, answer.payload.text) == ("generator", _file("Priya_Raman_A1")[1]["memory_answer"])
    assert second[0].payload.description == _file("Priya_Raman_A1")[1]["current_observation"]


async def test_navigation_steps_carry_reason_and_actions(store: EventStore) -> None:
    priya = (await _episodes(store))["Priya_Raman_A1"]
    assert _actions(priya) == [
        (3, '{"action": "navigate", "url": "http://threads.p2w.test/search?q=running+leggings&size=M"}', "executed"),
        (4, '{"action": "click", "element_index": 204}', "executed"),
        (5, '{"action": "click", "element_index": 549}', "executed"),
        (
            6,
            '{"action": "done", "text": "Added the item on http://threads.p2w.test/cart/add to the cart."}',
            "executed",
        ),
    ]
    reasons = [
        (e.payload.step, e.payload.text) for e in priya if e.type == "rationale" and e.payload.source == "planner"
    ]
    assert reasons == [(s["step"], s["reason"]) for s in _file("Priya_Raman_A1") if s["step_type"] == "navigation"]
    assert [a.parsed.name for a in (e.payload for e in priya if e.type == "action")] == [
        "goto",
        "click",
        "click",
        "stop",
    ]


async def test_a_failed_model_call_repeats_the_previous_output_and_is_not_executed(store: EventStore) -> None:
    episodes = await _episodes(store)
    marcus = episodes["Marcus_Okafor_A1"]
    navigate = '{"action": "navigate", "url": "http://threads.p2w.test/search?q=slim+chinos"}'
    assert _actions(marcus) == [
        (2, navigate, "executed"),
        (3, navigate, "blocked"),
        (4, navigate, "blocked"),
        (5, navigate, "blocked"),
        (6, '{"action": "done", "text": "I could not finish the task."}', "executed"),
    ]
    assert {e.payload.error for e in marcus if e.type == "action" and e.payload.status == "blocked"} == {FAILED}
    assert [e.payload.step for e in marcus if e.type == "rationale"] == [1, 2, 6], "a failed step has no reasoning"
    tomas = episodes["Tomas_Reyes_A1"]
    assert [(step, status) for step, _, status in _actions(tomas)] == [
        (2, "executed"), (3, "blocked"), (4, "executed"), (5, "executed")
    ]  # fmt: skip
    lena = episodes["Lena_Fischer_A1"]
    assert all(status == "executed" for _, _, status in _actions(lena)), "scrolls with their own reasons all ran"


async def test_the_agents_success_flag_comes_from_the_summary(store: EventStore) -> None:
    episodes = await _episodes(store)
    summary = _summary()
    assert {task: summary[task]["success"] for task in TASKS} == {
        "Lena_Fischer_A1": False, "Marcus_Okafor_A1": False, "Priya_Raman_A1": True, "Tomas_Reyes_A1": False
    }  # fmt: skip
    for task, events in episodes.items():
        detail = events[-1].payload.detail
        if summary[task]["success"]:
            assert detail is None, task
        else:
            assert detail == "the agent's done reported success: false (_summary.json)", task
        assert events[-1].payload.answer == summary[task]["final_result"], task


async def test_importing_the_real_folder_again_resumes_nothing(store: EventStore) -> None:
    first = await import_folder(store, BROWSER_USE, REAL, label="real")
    again = await import_folder(store, BROWSER_USE, REAL, label="real")
    assert (again.run_id, again.imported, sorted(again.already)) == (first.run_id, [], TASKS)


async def test_a_summary_written_on_windows_names_the_same_tasks(tmp_path: Path, store: EventStore) -> None:
    """The runner records ``str(task_path)`` of the machine it ran on; on Windows that path has backslashes."""
    folder = tmp_path / REAL.name
    shutil.copytree(REAL, folder)
    records = json.loads((folder / "_summary.json").read_text(encoding="utf-8"))
    windows = "C:\\Users\\alice\\Persona2Web\\browser-use\\task\\personalization_1\\"
    for record in records:
        record["task_file"] = windows + Path(record["task_file"]).name
    (folder / "_summary.json").write_text(json.dumps(records, ensure_ascii=False, indent=2), encoding="utf-8")
    report = await import_folder(store, BROWSER_USE, folder, label="windows")
    details = {
        ref.task_id: (await events_of(store, ref.stream))[-1].payload.detail
        for ref in await episodes_of(store, report.run_id)
    }
    false = "the agent's done reported success: false (_summary.json)"
    assert details == {task: None if _summary()[task]["success"] else false for task in TASKS}
