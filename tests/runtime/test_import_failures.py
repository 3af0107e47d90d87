"""Importing trajectories that go wrong: bad files named by field, --skip-bad, resume (the command line:
``tests/cli/test_import_trajectories_cli.py``)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from p2w_runtime.domain import find_run
from p2w_runtime.importers import BadTrajectoryFiles, ImportConflict, TrajectoryImportError
from p2w_runtime.store import EventStore, open_store
from tests.helpers.import_support import (
    AGENTOCCAM,
    AGENTOCCAM_LOGS,
    BROWSER_USE,
    BROWSER_USE_RESULT,
    EXAMPLES,
    copy_example,
    events_of,
    import_folder,
    rewrite,
    run_import,
)


@pytest.fixture
def store(memory_store: EventStore) -> EventStore:
    """These tests need a store, not SQL: the in-memory one (docs/design/store.md, "The memory store")."""
    return memory_store


# -- errors --------------------------------------------------------------------------------------


async def bad_file_error(store: EventStore, fmt: str, path: Path, **options: Any) -> TrajectoryImportError:
    with pytest.raises(BadTrajectoryFiles) as caught:
        await run_import(store, fmt, [path], **options)
    assert len(caught.value.errors) == 1
    assert [s async for s in store.read_all()] == []
    return caught.value.errors[0]


async def test_malformed_json_names_the_file(tmp_path: Path, store: EventStore) -> None:
    path = tmp_path / "on_gpt41_Jordan_Park_B2.json"
    path.write_text('[{"step": 1,\n "url": }]')
    error = await bad_file_error(store, BROWSER_USE, path)
    assert str(error) == f"{path}: invalid JSON at line 2, column 9: Expecting value"


async def test_an_index_outside_the_memory_bank_names_file_and_field(tmp_path: Path, store: EventStore) -> None:
    path, data = copy_example(tmp_path, AGENTOCCAM, 0)
    data["memory"][1]["Retrieved memory index"] = [2, 34]
    error = await bad_file_error(store, AGENTOCCAM, rewrite(path, data))
    assert error.path == path and error.field == "memory[1].Retrieved memory index[1]"
    assert str(error) == (
        f"{path}: field memory[1].Retrieved memory index[1]: "
        "index 34 is outside the memory bank of Jordan_Park (34 entries)"
    )


async def test_browser_use_bad_index_and_step_type(tmp_path: Path, store: EventStore) -> None:
    path, data = copy_example(tmp_path, BROWSER_USE, 0)
    data[1]["retrieved_memory_indices"] = [5, "seven"]
    error = await bad_file_error(store, BROWSER_USE, rewrite(path, data))
    assert str(error) == f"{path}: field [1].retrieved_memory_indices[1]: memory index 'seven' is not an integer"
    data[1]["retrieved_memory_indices"] = [5]
    data[2]["step_type"] = "thinking"
    error = await bad_file_error(store, BROWSER_USE, rewrite(path, data))
    assert str(error) == (
        f"{path}: field [2]: Input tag 'thinking' found using 'step_type' does not match any of the expected tags: "
        "'memory', 'navigation'"
    )


@pytest.mark.parametrize("index", ["²", "٣", "9" * 5000], ids=["superscript", "arabic-indic", "5000-digits"])
async def test_a_memory_index_of_other_than_ascii_digits_is_a_bad_file(
    tmp_path: Path, store: EventStore, index: str
) -> None:
    """``"²".isdigit()`` holds but ``int("²")`` raises, ``int("٣")`` is 3, ``int()`` refuses 5000 digits: only
    ASCII digits name an entry; the others were a traceback, an entry nobody wrote, a traceback."""
    path, data = copy_example(tmp_path, BROWSER_USE, 0)
    data[1]["retrieved_memory_indices"] = [5, index]
    error = await bad_file_error(store, BROWSER_USE, rewrite(path, data))
    assert str(error).startswith(f"{path}: field [1].retrieved_memory_indices[1]: memory index '{index[:50]}")
    assert str(error).endswith("is not an integer") and len(str(error)) < 400


async def test_a_memory_index_written_as_ascii_digits_names_that_entry(tmp_path: Path, store: EventStore) -> None:
    path, data = copy_example(tmp_path, BROWSER_USE, 0)
    data[1]["retrieved_memory_indices"] = [" 7 ", 5]
    report = await run_import(store, BROWSER_USE, [rewrite(path, data)])
    events = await events_of(store, f"{report.run_id}/{report.imported[0]}")
    retrieval = next(e for e in events if e.type == "history.retrieval")
    assert [h.entry_id for h in retrieval.payload.hits] == [7, 5]


async def test_a_step_observed_again_after_its_action_is_a_bad_file(tmp_path: Path, store: EventStore) -> None:
    path, data = copy_example(tmp_path, BROWSER_USE, 0)
    data[1]["step"] = data[0]["step"]  # the memory step's page, numbered as the step that already acted
    error = await bad_file_error(store, BROWSER_USE, rewrite(path, data))
    assert str(error) == f"{path}: observation out of order: observation of step 1 after an action of step 1"


async def test_unknown_task_id_names_the_field_it_came_from(tmp_path: Path, store: EventStore) -> None:
    path, data = copy_example(tmp_path, AGENTOCCAM, 0, "trajectory.json")
    data["id"] = "Nobody_Here_A1"
    error = await bad_file_error(store, AGENTOCCAM, rewrite(path, data))
    assert error.field == "id" and "unknown task id 'Nobody_Here_A1' (12 tasks in" in str(error)
    renamed = tmp_path / "on_gpt41_Nobody_Here_A1.json"
    shutil.copy(EXAMPLES.trajectories(BROWSER_USE)[0], renamed)
    error = await bad_file_error(store, BROWSER_USE, renamed)
    assert error.field == "file name" and "does not end with a task id of the task set" in str(error)


async def test_structural_errors_name_their_fields(tmp_path: Path, store: EventStore) -> None:
    path, data = copy_example(tmp_path, AGENTOCCAM, 0)
    error = await bad_file_error(store, AGENTOCCAM, rewrite(path, {**data, "trajectory": None}))
    assert error.field == "trajectory"
    error = await bad_file_error(store, AGENTOCCAM, rewrite(path, {**data, "id": "Mina_Okafor_A2"}))
    assert error.field == "id" and "disagrees with the file name's task id 'Jordan_Park_A1'" in str(error)
    steps = [dict(s) for s in data["trajectory"]]
    del steps[2]["action"]
    error = await bad_file_error(store, AGENTOCCAM, rewrite(path, {**data, "trajectory": steps}))
    assert str(error) == f"{path}: field trajectory[2].action: missing"
    unnamed = tmp_path / "trajectory.json"
    shutil.copy(EXAMPLES.trajectories(BROWSER_USE)[0], unnamed)
    error = await bad_file_error(store, BROWSER_USE, unnamed)
    assert error.field == "file name"


async def test_a_missing_memory_bank_is_a_bad_file_but_no_history_files_need_none(
    tmp_path: Path, store: EventStore
) -> None:
    empty_history = tmp_path / "history"
    empty_history.mkdir()
    error = await bad_file_error(store, AGENTOCCAM, EXAMPLES.trajectories(AGENTOCCAM)[0], history_dir=empty_history)
    assert error.field == "memory[0].Retrieved memory index"
    assert "no memory bank for persona 'Jordan_Park' (0 personas" in str(error)
    path, data = copy_example(tmp_path, AGENTOCCAM, 0, "base_gpt41_Jordan_Park_A1.json")
    report = await run_import(store, AGENTOCCAM, [rewrite(path, {**data, "memory": []})], history_dir=empty_history)
    assert report.imported == ["Jordan_Park_A1"]
    assert (await find_run(store, report.run_id)).started.scheme == "no-history"


async def test_files_must_agree_on_model_and_scheme_unless_given(tmp_path: Path, store: EventStore) -> None:
    first = EXAMPLES.trajectories(AGENTOCCAM)[0]
    other, data = copy_example(tmp_path, AGENTOCCAM, 1)
    rewrite(other, {**data, "model": "gpt-4o"})
    with pytest.raises(BadTrajectoryFiles) as caught:
        await run_import(store, AGENTOCCAM, [first, other])
    assert str(caught.value.errors[0]) == f"{other}: field model: 'gpt-4o' differs from the run's model 'gpt-4.1'"
    report = await run_import(store, AGENTOCCAM, [first, other], model="mixed-gpt", scheme="on-demand")
    run = await find_run(store, report.run_id)
    assert (run.started.backbone_model, run.started.scheme) == ("mixed-gpt", "on-demand")
    query = next(e for e in await events_of(store, f"{report.run_id}/Jordan_Park_A1") if e.type == "history.query")
    assert query.payload.phase == "on-demand"


async def test_a_bad_file_does_not_decide_the_runs_model(tmp_path: Path, store: EventStore) -> None:
    bad, data = copy_example(tmp_path, AGENTOCCAM, 0)
    data["memory"][0]["Retrieved memory index"] = [999]
    rewrite(bad, {**data, "model": "gpt-4o"})  # sorted first, bad, and of another model
    good = EXAMPLES.trajectories(AGENTOCCAM)[1]
    report = await run_import(store, AGENTOCCAM, [bad, good], skip_bad=True)
    assert report.imported == ["Mina_Okafor_A2"] and [e.path for e in report.bad] == [bad]
    assert (await find_run(store, report.run_id)).started.backbone_model == "gpt-4.1"


async def test_the_same_task_twice_in_one_import_is_a_bad_file(tmp_path: Path, store: EventStore) -> None:
    first = EXAMPLES.trajectories(AGENTOCCAM)[0]
    twin = tmp_path / first.name
    shutil.copy(first, twin)
    report = await run_import(store, AGENTOCCAM, [first, twin], skip_bad=True)
    assert report.imported == ["Jordan_Park_A1"]
    assert str(report.bad[0]) == f"{twin}: field id: task Jordan_Park_A1 is also in {first}"


async def test_a_lone_surrogate_is_a_bad_file_found_before_anything_is_written(
    tmp_path: Path, store: EventStore
) -> None:
    folder = tmp_path / "on-demand_gpt41_1"
    shutil.copytree(BROWSER_USE_RESULT / "on-demand_gpt41_1", folder)
    spoiled = folder / "on_gpt41_Tomas_Reyes_B1.json"
    # json.loads accepts the escape; the string cannot be encoded, so it used to fail at the first append
    spoiled.write_text(spoiled.read_text(encoding="utf-8").replace("Size 10.5", "Size \\ud83d 10.5"))
    with pytest.raises(BadTrajectoryFiles) as caught:
        await import_folder(store, BROWSER_USE, folder)
    [error] = caught.value.errors
    assert (error.path, error.field) == (spoiled, "[1].memory_answer")
    assert "lone surrogate '\\ud83d' at character 5" in str(error)
    assert await store.count() == (0, 0), "no run.started, no episode: the file was checked first"


async def test_a_file_name_that_is_not_utf8_is_a_bad_file(tmp_path: Path, store: EventStore) -> None:
    source = EXAMPLES.trajectories(BROWSER_USE)[0]
    # a Latin-1 byte in the model tag: the name still ends with a known task id
    raw = tmp_path / os.fsdecode(source.name.replace("gpt41", "gpt41\xe9").encode("latin-1"))
    shutil.copy(source, raw)
    error = await bad_file_error(store, BROWSER_USE, raw)
    assert (error.path, error.field) == (raw, "file name") and "not valid UTF-8" in error.message


async def test_a_file_name_without_a_known_task_id_names_the_file(tmp_path: Path, store: EventStore) -> None:
    folder = tmp_path / "run"
    shutil.copytree(AGENTOCCAM_LOGS / "no-history_gpt41", folder)
    stray = folder / "base_gpt41_Lena_Fischer_A9.json"
    data = json.loads((folder / "base_gpt41_Lena_Fischer_A3.json").read_text())
    rewrite(stray, {**data, "id": None})
    with pytest.raises(BadTrajectoryFiles) as caught:
        await import_folder(store, AGENTOCCAM, folder)
    assert str(caught.value.errors[0]) == (
        f"{stray}: field id: missing, and the file name does not end with a known task id"
    )


async def test_browser_use_names_must_carry_the_summary_models_tag(tmp_path: Path, store: EventStore) -> None:
    folder = tmp_path / "on-demand_gpt41_1"
    shutil.copytree(BROWSER_USE_RESULT / "on-demand_gpt41_1", folder)
    (folder / "on_gpt41_Tomas_Reyes_B1.json").rename(folder / "on_gpt4o_Tomas_Reyes_B1.json")
    with pytest.raises(BadTrajectoryFiles) as caught:
        await import_folder(store, BROWSER_USE, folder)
    assert str(caught.value.errors[0]) == (
        f"{folder / 'on_gpt4o_Tomas_Reyes_B1.json'}: field file name: "
        "model tag 'gpt4o' differs from the run's model 'gpt-4.1' (tag 'gpt41')"
    )


async def test_a_malformed_summary_names_its_field(tmp_path: Path, store: EventStore) -> None:
    folder = tmp_path / "on-demand_default_1"
    shutil.copytree(BROWSER_USE_RESULT / "on-demand_default_1", folder)
    summary = folder / "_summary.json"
    records = json.loads(summary.read_text())
    rewrite(summary, [{**records[0], "scheme": "sometimes"}])
    with pytest.raises(BadTrajectoryFiles) as caught:
        await import_folder(store, BROWSER_USE, folder)
    assert str(caught.value.errors[0]).startswith(f"{summary}: field [0].scheme: Input should be 'on-demand'")
    assert await store.count() == (0, 0)


async def test_an_empty_model_tag_needs_the_summary_or_model(tmp_path: Path, store: EventStore) -> None:
    folder = tmp_path / "on-demand_default_1"
    shutil.copytree(BROWSER_USE_RESULT / "on-demand_default_1", folder)
    (folder / "_summary.json").unlink()
    with pytest.raises(BadTrajectoryFiles, match=r"on__Priya_Raman_B1.json: field model: not in the file or its name"):
        await import_folder(store, BROWSER_USE, folder)
    report = await import_folder(store, BROWSER_USE, folder, model="bu-1-0")
    assert (await find_run(store, report.run_id)).started.backbone_model == "bu-1-0"


async def test_a_folder_without_trajectories_is_one_clear_error(tmp_path: Path, store: EventStore) -> None:
    empty = tmp_path / "result" / "on-demand_gpt41_1"
    empty.mkdir(parents=True)
    (empty / "_summary.json").write_text("[]")
    with pytest.raises(ImportConflict, match=rf"^no trajectory files in {empty}$"):
        await import_folder(store, BROWSER_USE, empty)
    assert await store.count() == (0, 0)


async def test_progress_is_reported_for_every_file_checked_then_every_episode_written(store: EventStore) -> None:
    seen: list[tuple[str, int, int]] = []
    await import_folder(
        store, BROWSER_USE, BROWSER_USE_RESULT / "on-demand_gpt41_1", progress=lambda *a: seen.append(a)
    )
    assert seen == [("checking", i, 5) for i in range(1, 6)] + [("writing", i, 4) for i in range(1, 5)]


# -- skip-bad and resume -------------------------------------------------------------------------


async def test_skip_bad_imports_the_good_files_and_lists_the_bad(tmp_path: Path, store: EventStore) -> None:
    good = EXAMPLES.trajectories(BROWSER_USE)
    broken = tmp_path / "on_gpt41_Mina_Okafor_A1.json"
    broken.write_text("{ not json")
    paths = [good[0], broken, good[2]]
    with pytest.raises(BadTrajectoryFiles, match=r"^1 bad trajectory file \(--skip-bad imports the rest\): "):
        await run_import(store, BROWSER_USE, paths)
    report = await run_import(store, BROWSER_USE, paths, skip_bad=True)
    assert report.imported == ["Jordan_Park_B2", "Theo_Lindqvist_A2"]
    assert [e.path for e in report.bad] == [broken] and report.episodes == 2
    run = await find_run(store, "demo")
    assert run.finished is not None and run.finished.episodes == 2 and run.episodes == 2


async def test_all_files_bad_writes_nothing_even_with_skip_bad(tmp_path: Path, store: EventStore) -> None:
    broken = tmp_path / "on_gpt41_Mina_Okafor_A1.json"
    broken.write_text("[")
    with pytest.raises(BadTrajectoryFiles):
        await run_import(store, BROWSER_USE, [broken], skip_bad=True)
    assert await store.count() == (0, 0)


async def test_an_interrupted_import_is_resumed_under_the_same_label(tmp_path: Path, store: EventStore) -> None:
    async with open_store(tmp_path / "complete.db") as complete:
        full = await run_import(complete, AGENTOCCAM)
        # What a kill after the first episode leaves behind: run.started and one whole episode, no run.finished.
        partial = [(await events_of(complete, full.run_id))[0]]
        partial += await events_of(complete, f"{full.run_id}/Jordan_Park_A1")
        raw = [s async for s in complete.read_all() if s.event_id in {e.event_id for e in partial}]
        blobs = {sha: await complete.get_blob(sha) for s in raw for sha in s.blobs}  # the dataset run.started names
    await store.append_stored(raw, blobs)
    assert (await find_run(store, "demo")).finished is None

    report = await run_import(store, AGENTOCCAM)
    assert report.resumed and report.run_id == full.run_id
    assert report.already == ["Jordan_Park_A1"]
    assert report.imported == ["Mina_Okafor_A2", "Theo_Lindqvist_A1"]
    run = await find_run(store, "demo")
    assert run.finished is not None and run.finished.episodes == 3 and run.episodes == 3
    assert len(await events_of(store, f"{full.run_id}/Jordan_Park_A1")) == 26

    again = await run_import(store, AGENTOCCAM)
    assert again.imported == [] and len(again.already) == 3 and again.episodes == 3
    # the two episodes imported now are sealed as written, together (one transaction); the one the killed import
    # left unsealed, by run.finished
    run_events = await events_of(store, full.run_id)
    assert [e.type for e in run_events] == ["run.started", "episode.sealed", "run.finished"]
    assert [s.stream.split("/")[1] for s in run_events[1].payload.seals] == ["Mina_Okafor_A2", "Theo_Lindqvist_A1"]


async def test_a_finished_run_does_not_take_new_files_and_labels_do_not_cross_formats(store: EventStore) -> None:
    await run_import(store, AGENTOCCAM, EXAMPLES.trajectories(AGENTOCCAM)[:1])
    with pytest.raises(ImportConflict, match=r"is finished and lacks 2 of these files"):
        await run_import(store, AGENTOCCAM)
    with pytest.raises(ImportConflict, match=r"label 'demo' is already used by run .* \(p2w-agentoccam\)"):
        await run_import(store, BROWSER_USE)


async def test_a_resumed_run_must_use_the_same_dataset(tmp_path: Path, store: EventStore) -> None:
    await run_import(store, AGENTOCCAM)
    tasks = tmp_path / "tasks"
    shutil.copytree(EXAMPLES.tasks_dir, tasks)
    (tasks / "personalization_1" / "Jordan_Park_B1.json").unlink()
    with pytest.raises(ImportConflict, match=r"was imported against dataset persona2web@\w+, but .* is persona2web@"):
        await run_import(store, AGENTOCCAM, tasks_dir=tasks)
