"""Which task ids may name episodes (``p2w_runtime.domain.check_task_id``): a run's derived streams (``RUN/judgments``
and every other name a derived family declares), ``.``, ``..``, the empty id and the attempt mark are refused in one
line wherever a run's episodes are chosen, before anything is written; a run recorded with one earlier still reads,
and a pass that could not store its results there is refused up front while other runs are judged as before."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.replay.derived import DerivedStream, families
from p2w_rt.replay.judges import JudgmentRecord
from p2w_rt.schemas import Judgment, uuid7
from p2w_runtime.domain import list_runs
from p2w_runtime.errors import UserError
from p2w_runtime.recording import open_run
from p2w_runtime.store import EventStore, open_store
from p2w_runtime.testing.episodes import EpisodeBuilder, run_finished, run_started
from tests.helpers.builders import CHINOS_TRUTH
from tests.helpers.import_support import AGENTOCCAM, EXAMPLES
from tests.helpers.recording_tasks import TASKS, Sketch


def invoke(db: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--db", str(db), *args])
    return result.exit_code, result.output


def derived_names() -> list[str]:
    """The name of every derived stream a registered family declares (``RUN/NAME``)."""
    return sorted({family.stream.suffix.removeprefix("/") for family in families()})


async def test_the_recording_api_refuses_every_derived_stream_name_before_anything_is_written(
    store: EventStore,
) -> None:
    names = derived_names()
    assert {"judgments", "classifications", "retrieval-cf"} <= set(names)
    for name in names:
        with pytest.raises(UserError) as refused:
            await open_run(store, label="api", agent="mine", model="m", tasks=[*TASKS, Sketch(name, "buy oil")])
        assert str(refused.value) == (
            f"run 'api': task id '{name}' cannot name an episode: the run's derived results live in RUN/{name}"
        )
    assert await list_runs(store) == []


@pytest.mark.parametrize(
    ("task_id", "reason"),
    [
        (".", "a link to its episode would be read as a relative path and never reach it"),
        ("..", "a link to its episode would be read as a relative path and never reach it"),
        ("", "it is empty"),
        ("T1#2", "'#' marks an attempt (TASK#2 is the second attempt at TASK)"),
    ],
)
async def test_the_recording_api_refuses_ids_no_link_or_attempt_could_name(
    store: EventStore, task_id: str, reason: str
) -> None:
    with pytest.raises(UserError) as refused:
        await open_run(store, label="api", agent="mine", model="m", tasks=[Sketch(task_id, "buy oil")])
    assert str(refused.value) == f"run 'api': task id {task_id!r} cannot name an episode: {reason}"
    assert isinstance(refused.value, ValueError)  # a library caller may catch either
    assert await list_runs(store) == []


def test_a_derived_stream_takes_only_a_name_the_domain_reserves() -> None:
    from p2w_runtime.domain import DERIVED_NAMES

    assert {family.stream.suffix for family in families()} <= {f"/{name}" for name in DERIVED_NAMES}
    with pytest.raises(ValueError, match="derived stream RUN/verdicts .* is not one of the names"):
        DerivedStream("/verdicts", "judgment", Judgment, JudgmentRecord)


def test_an_import_of_a_runner_file_whose_task_id_is_judgments_is_one_line_naming_the_file(tmp_path: Path) -> None:
    source = EXAMPLES.trajectories(AGENTOCCAM)[0]
    crafted = tmp_path / "trajectory.json"
    crafted.write_text(json.dumps({**json.loads(source.read_text()), "id": "judgments"}))
    db = tmp_path / "p2w.db"
    code, output = invoke(
        db, "import-trajectories", "--format", AGENTOCCAM, "--label", "occam", "--tasks", str(EXAMPLES.tasks_dir),
        "--history", str(EXAMPLES.history_dir), str(crafted),
    )  # fmt: skip
    assert code == 1 and output.count("\n") == 1 and "Traceback" not in output
    assert output.startswith("error: 1 bad trajectory file")
    assert (
        f"{crafted}: field id: task id 'judgments' cannot name an episode: the run's derived results live in" in output
    )
    assert invoke(db, "runs")[1].startswith("no runs")


def test_a_curation_whose_profile_makes_a_derived_stream_name_is_refused_naming_the_profiles(tmp_path: Path) -> None:
    profile = json.loads((Path(__file__).parents[1] / "data/agenticshop/open_user_profile.json").read_text())[0]
    profiles = tmp_path / "retrieval_user_profile.json"  # category "retrieval", user "cf": task "retrieval-cf"
    profiles.write_text(json.dumps([{**profile, "user": "cf"}]))
    results = tmp_path / "out.json"
    results.write_text(json.dumps([{"user": "cf", "search_results": []}]))
    db = tmp_path / "p2w.db"
    code, output = invoke(db, "import-curation", str(results), "--profiles", str(profiles), "--label", "shop")
    assert code == 1 and output.count("\n") == 1, output
    assert output == (
        f"error: {profiles}: user cf: task id 'retrieval-cf' cannot name an episode: "
        "the run's derived results live in RUN/retrieval-cf\n"
    )
    assert invoke(db, "runs")[1].startswith("no runs")


async def _recorded(store: EventStore, label: str, tasks: tuple[str, ...]) -> str:
    """A finished run of answered chinos episodes, written as a recorder did before task ids were checked."""
    run_id = uuid7()
    await store.append([run_started(run_id, label)])
    for task in tasks:
        b = EpisodeBuilder(run_id, task, query="Find chinos", ground_truth=CHINOS_TRUTH, level=0)
        b.observation(1, "https://www.kohls.com/search?q=chinos+32x32")
        b.action(1, "stop", "Chinos 32x32 at $59")
        b.finish("answered", "Chinos 32x32 at $59", steps=1)
        await store.append(b.events, b.blobs)
    await store.append([run_finished(run_id, len(tasks))])
    return run_id


def test_a_judging_pass_on_an_ordinary_run_is_untouched_and_one_holding_judgments_is_refused_up_front(
    tmp_path: Path,
) -> None:
    db = tmp_path / "p2w.db"

    async def build() -> str:
        async with open_store(db, create=True) as store:
            await _recorded(store, "plain", ("Alex_Garcia_A3",))
            return await _recorded(store, "old", ("Alex_Garcia_A3", "judgments"))

    old = asyncio.run(build())
    code, output = invoke(db, "replay", "plain", "--judge", "rubric-rules")
    assert code == 0, output
    assert "plain: judged 1, cached 0, failed 0" in output
    code, output = invoke(db, "replay", "old", "--judge", "rubric-rules")
    assert code == 1 and "Traceback" not in output
    assert output.splitlines()[-1] == (
        f"error: run {old}: episode 'judgments', recorded before task ids could not take that name, holds "
        f"{old}/judgments, where its judge results go: none can be stored for this run"
    )
    labels = tmp_path / "labels.csv"
    labels.write_text("run,task,point,label,annotator\nold,judgments,website,1,ann\n")
    code, output = invoke(db, "import-labels", str(labels))
    assert code == 1 and output.endswith(
        f"{old}/judgments, where its judge results go: none can be stored for this run\n"
    )
    code, output = invoke(db, "show", "old", "judgments")
    assert code == 0 and "episode.finished" in output
    code, output = invoke(db, "classify", "old")
    assert code == 0 and "old: classified 2, cached 0, failed 0" in output
