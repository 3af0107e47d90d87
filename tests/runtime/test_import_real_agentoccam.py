"""The real AgentOccam runner's own output folder (``tests/data/runners-real``), imported end to end.

Each expectation is what ``agent_runner.py`` / ``AgentOccam.act`` / ``env.py`` did, read from their code:
``env.step`` counts every action (memory notes too) into ``num_actions``, the step past ``max_steps`` is
logged but not carried out, ``plan`` is read after ``finalize_action`` applied a plan change, and
``objective`` is the system instruction plus the query.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.replay.classify import RulesClassifier
from p2w_rt.replay.derived import PassSettings, run_pass
from p2w_rt.replay.judges import JUDGES, make_judge
from p2w_rt.schemas import GENESIS_HASH, EpisodeStarted, Event, NewEvent, StoredEvent
from p2w_runtime.demo.sample import sample_history_dir, sample_tasks_dir
from p2w_runtime.domain.trajectory import load_trajectories
from p2w_runtime.importers._agentoccam_steps import place_actions
from p2w_runtime.store import EventStore
from tests.helpers.import_support import AGENTOCCAM, events_of, import_folder
from tests.helpers.paths import DATA


@pytest.fixture
def store(memory_store: EventStore) -> EventStore:
    """These tests need a store, not SQL: the in-memory one (docs/design/store.md, "The memory store")."""
    return memory_store


REAL = DATA / "runners-real" / "agentoccam" / "on-demand_gpt41"
TASKS = ["Priya_Raman_A1", "Tomas_Reyes_A1", "Lena_Fischer_A1", "Marcus_Okafor_A1", "Lena_Fischer_B1"]


def _file(task: str) -> dict:
    path = REAL / f"on_gpt41_{task}.json"
    return json.loads((path if path.exists() else REAL / "captcha_stopped" / path.name).read_text())


def _summary_actions() -> dict[str, int]:
    lines = (REAL / "summary.csv").read_text().splitlines()[1:]
    return {line.split(",")[1]: int(line.split(",")[-1]) for line in lines}


def _actions(events: list[Event]) -> list[tuple[int, str, str]]:
    return [(e.payload.step, e.payload.raw, e.payload.status) for e in events if e.type == "action"]


def _cli(tmp_path: Path, folder: Path) -> list[str]:
    args = ["--db", str(tmp_path / "real.db"), "import-trajectories", "--format", AGENTOCCAM, "--label", "real"]
    args += ["--tasks", str(sample_tasks_dir()), "--history", str(sample_history_dir()), str(folder)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()  # stderr: the line per written episode


def test_cli_imports_the_real_folder_and_names_what_the_files_do_not_account_for(tmp_path: Path) -> None:
    lines = _cli(tmp_path, REAL)
    assert lines[1:] == [
        "imported 5, already imported 0, bad 0",
        "Lena_Fischer_A1: step 9 ('go_back') was logged but not carried out: env.step stops past max_steps 8",
        "Lena_Fischer_B1: 1 action(s) counted by the runner but not in the file (num_actions 1): memory accesses "
        "that found nothing (the runner writes no entry for them)",
    ]


def test_cli_names_the_tasks_of_the_config_that_have_no_file(tmp_path: Path) -> None:
    folder = tmp_path / "on-demand_gpt41"
    shutil.copytree(REAL, folder)
    (folder / "on_gpt41_Tomas_Reyes_A1.json").unlink()
    (folder / "on_gpt41_Lena_Fischer_B1.json").unlink()  # the invocation killed while it ran
    lines = _cli(tmp_path, folder)
    assert lines[1] == "imported 3, already imported 0, bad 0"
    assert "missing tasks (in the config's task_ids, no trajectory file): Tomas_Reyes_A1, Lena_Fischer_B1" in lines


async def test_step_numbers_are_the_runners_num_actions(store: EventStore) -> None:
    report = await import_folder(store, AGENTOCCAM, REAL, label="real")
    assert sorted(report.imported) == sorted(TASKS) and report.missing == []
    counted = _summary_actions()
    for task in TASKS:
        events = await events_of(store, f"{report.run_id}/{task}")
        logged = {s["num_actions"] for s in _file(task)["trajectory"]}
        acted = {step for step, _, _ in _actions(events)}
        assert logged <= acted, task
        assert max(acted) == counted[task], task

    priya = await events_of(store, f"{report.run_id}/Priya_Raman_A1")
    assert _actions(priya) == [
        (1, "memory_access [which website I buy leggings on]", "executed"),
        (2, "memory_access [my leggings size]", "executed"),
        (3, "type [35] [running leggings] [1]", "executed"),
        (4, "click [150]", "executed"),
        (5, "note [Stride High-Rise leggings, size M, 4.6 stars, $54]", "executed"),
        (5, f"stop [{priya[-1].payload.answer}]", "executed"),
    ]
    second = [e for e in priya if getattr(e.payload, "step", None) == 2]
    assert [e.type for e in second] == ["observation", "action", "history.query", "history.retrieval", "rationale"]
    assert second[0].payload.url == "http://search.p2w.test/", "the page of the next logged step"
    assert second[3].causation_id == second[2].event_id and second[4].causation_id == second[3].event_id
    assert [h.entry_id for h in second[3].payload.hits] == [0, 60, 323]
    assert second[4].payload.text.endswith("in a medium, black, $54.00 on threads.p2w.test.")
    assert priya[-1].payload.steps == 5 and priya[-1].payload.end_reason == "answered"
    assert priya[-1].payload.answer == (
        "Stride Women's High-Rise Running Leggings in size M (4.6 stars, $54) on threads.p2w.test"
    )

    lena = await events_of(store, f"{report.run_id}/Lena_Fischer_B1")
    assert [(s, raw.split(" [")[0]) for s, raw, _ in _actions(lena)] == [
        (2, "memory_access"), (3, "branch"), (4, "type"), (5, "stop")
    ]  # fmt: skip
    assert not any(e.payload.step == 1 for e in lena if hasattr(e.payload, "step")), "nothing recorded is invented"
    assert lena[-1].payload.steps == 5


async def test_the_step_past_max_steps_is_logged_but_not_executed(store: EventStore) -> None:
    report = await import_folder(store, AGENTOCCAM, REAL, label="real")
    events = await events_of(store, f"{report.run_id}/Lena_Fischer_A1")
    ninth = [e.payload for e in events if e.type == "action" and e.payload.step == 9]
    assert [(a.raw, a.status) for a in ninth] == [("go_back", "blocked")]
    assert ninth[0].error == "not carried out: env.step stops past max_steps 8"
    executed = [step for step, _, status in _actions(events) if status == "executed"]
    assert executed == list(range(1, 9))
    end = events[-1].payload
    assert (end.end_reason, end.steps, end.answer) == ("max_steps", 8, None)
    assert end.detail.startswith("stopped by the runner's step limit: step 9 logged but not carried out")
    assert report.notes["Lena_Fischer_A1"] == [
        "step 9 ('go_back') was logged but not carried out: env.step stops past max_steps 8"
    ]


async def test_plans_follow_their_step_branch_is_a_planning_action_and_the_objective_is_kept(
    store: EventStore,
) -> None:
    report = await import_folder(store, AGENTOCCAM, REAL, label="real")
    lena = await events_of(store, f"{report.run_id}/Lena_Fischer_B1")
    third = [e for e in lena if getattr(e.payload, "step", None) == 3]
    assert [e.type for e in third] == ["observation", "rationale", "action", "rationale"]
    assert third[2].payload.parsed.name == "branch"
    assert third[3].payload.text == "Plan after this step: [1] Find a restaurant on TableFor"
    plans = [e.payload.text for e in lena if e.type == "rationale" and e.payload.text.startswith("Plan after")]
    assert len(plans) == 1, "the plan is written when it changes, not on every step"
    priya = await events_of(store, f"{report.run_id}/Priya_Raman_A1")
    assert not any(e.type == "rationale" and e.payload.text.startswith("Plan after") for e in priya), (
        "the root plan only restates the objective"
    )

    (t,) = [t async for t in load_trajectories(store, report.run_id) if t.task_id == "Lena_Fischer_B1"]
    assert [a.is_browser_action for a in t.actions] == [False, False, True, True]  # access, branch, type, stop
    started = lena[0].payload
    objective = _file("Lena_Fischer_B1")["trajectory"][0]["objective"]
    assert started.objective == objective
    assert objective.startswith("First, you MUST retrieve user\u2019s preferred website")
    assert objective.endswith(f"Query: {started.query}")


async def test_rules_classifier_and_judge_on_the_real_text(store: EventStore) -> None:
    report = await import_folder(store, AGENTOCCAM, REAL, label="real")
    trajectories = {t.task_id: t async for t in load_trajectories(store, report.run_id)}
    classifier = RulesClassifier()
    labels = {task: {lab.label: lab for lab in classifier.label(t).labels} for task, t in trajectories.items()}
    # typed "wireless headphones 4 / 6 / 8": query variants, no preference the agent applied
    assert "personalization_hallucination" not in labels["Lena_Fischer_A1"]
    assert set(labels["Lena_Fischer_A1"]) == {"history_retrieval_failure", "max_steps"}
    # "Bought ... in a medium" was retrieved, and so were "four and a half stars and up" and "less than sixty
    # dollars" (numbers in words, issue 41): only the location is a retrieval failure
    missed = labels["Priya_Raman_A1"]["history_retrieval_failure"].explanation
    assert missed.startswith("location 'Austin, TX 78701' never appear(s)") and "preference" not in missed

    await run_pass(JUDGES, store, report.run_id, [make_judge("rubric-rules", PassSettings())])
    judged = [e for e in await events_of(store, f"{report.run_id}/judgments") if e.type == "judgment"]
    priya = next(j.payload for j in judged if j.payload.episode_stream.endswith("/Priya_Raman_A1"))
    assert (priya.points["pref.1.retrieval"], priya.points["pref.1.utilization"]) == (2.5, 2.5)  # size M
    assert "in a medium" in priya.evidence["pref.1.retrieval"].text
    # the rating and the budget, written in words in the history, and met by the 4.6-star, $54 pair she chose
    assert [priya.points[f"pref.{i}.{k}"] for i in (2, 3) for k in ("retrieval", "utilization")] == [2.5] * 4
    assert priya.metrics["p_pref"] == 0.75  # was 0.25: only size M was read
    applied = (priya.evidence["pref.2.utilization"].text, priya.evidence["pref.3.utilization"].text)
    assert applied == ("4.6 stars", "$54")
    tomas = next(j.payload for j in judged if j.payload.episode_stream.endswith("/Tomas_Reyes_A1"))
    assert tomas.points["location.utilization"] == 0.0, (
        "the objective restated as a plan is not the agent applying Denver"
    )


async def test_importing_the_real_folder_again_resumes_nothing(store: EventStore) -> None:
    first = await import_folder(store, AGENTOCCAM, REAL, label="real")
    again = await import_folder(store, AGENTOCCAM, REAL, label="real")
    assert (again.run_id, again.imported, sorted(again.already)) == (first.run_id, [], sorted(TASKS))


def test_an_episode_started_before_v3_reads_without_an_objective() -> None:
    new = StoredEvent.seal(
        NewEvent(stream="r/T_A1", payload=EpisodeStarted(episode_id="T_A1", task_id="T_A1", persona="T",
                                                         query_set="T_A", query="q", start_url="http://a/")),
        seq=1,
        prev_hash=GENESIS_HASH,
    )  # fmt: skip
    stored = json.loads(new.payload_json)
    assert stored.pop("objective") is None and new.schema_version == 3
    old = dataclasses.replace(new, schema_version=2, payload_json=json.dumps(stored))
    assert old.decode().payload.objective is None


@dataclasses.dataclass(frozen=True)
class _Logged:
    num_actions: int | None
    done: bool | None = False


@pytest.mark.parametrize(
    ("counts", "accesses", "summary", "placed", "unaccounted"),
    [
        ([3, 4, 5], 2, 5, {1: 0, 2: 1}, []),  # Priya_Raman_A1
        ([3, 4, 5], 1, 5, {2: 0}, [1]),  # Lena_Fischer_B1: the empty access came first
        ([2, 4], 2, 6, {5: 0, 6: 1}, [1, 3]),  # accesses after the last logged step show only in summary.csv
        ([1, 2], 0, None, {}, []),
    ],
)
def test_memory_accesses_fill_the_latest_unlogged_actions(
    counts: list[int], accesses: int, summary: int | None, placed: dict[int, int], unaccounted: list[int]
) -> None:
    steps = [_Logged(c) for c in counts]
    placement = place_actions(
        Path("f.json"),
        steps,
        accesses,
        on_demand=True,
        max_steps=None,
        summary_actions=summary,
        stops=[False] * len(steps),
    )
    assert {s.number: s.access for s in placement.slots if s.access is not None} == placed
    assert placement.unaccounted == unaccounted
    assert [s.number for s in placement.slots if s.step is not None] == counts


def test_counts_that_do_not_go_up_are_a_bad_file() -> None:
    from p2w_runtime.importers import TrajectoryImportError

    with pytest.raises(TrajectoryImportError, match=r"field trajectory\[1\]\.num_actions: 2 does not follow 3"):
        place_actions(Path("f.json"), [_Logged(3), _Logged(2)], 0, on_demand=True, max_steps=None,
                      summary_actions=None, stops=[False, False])  # fmt: skip


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("on-demand_gpt41.yml", "max_steps: [8\n", "not a readable YAML config copy"),
        ("on-demand_gpt41.yml", "max_steps: eight\n", "field max_steps: expected a positive integer, got 'eight'"),
        ("summary.csv", "task,task_id,num_actions\nx,Priya_Raman_A1,five\n", "field line 2: num_actions: 'five'"),
    ],
)
def test_a_bad_config_copy_or_summary_is_one_line_and_writes_nothing(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    folder = tmp_path / "on-demand_gpt41"
    shutil.copytree(REAL, folder)
    (folder / name).write_text(text)
    args = ["--db", str(tmp_path / "bad.db"), "import-trajectories", "--format", AGENTOCCAM, "--label", "bad"]
    args += ["--tasks", str(sample_tasks_dir()), "--history", str(sample_history_dir()), str(folder)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    assert message in result.output and str(folder / name) in result.output
    assert len([line for line in result.output.splitlines() if line.strip()]) == 1
    listed = CliRunner().invoke(main, ["--db", str(tmp_path / "bad.db"), "runs"])
    assert listed.output.startswith("no runs in ")
