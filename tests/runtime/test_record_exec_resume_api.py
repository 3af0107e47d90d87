"""A run opened by a script (the recording API's ``open_run``) resumes under ``p2w-rt record --exec CMD --resume``
and the reverse: both state the task folder's hash and read a recorded hash as the form it is, so runs recorded
before (``record --exec`` stored the hash of its selection) still resume. Before, each refused the other's run as
"recorded with other settings: tasks". Agents here ask no model: a shell script that exits."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from p2w_runtime.data import load_tasks
from p2w_runtime.demo.sample import sample_tasks_dir
from p2w_runtime.domain import carry_dataset, list_runs
from p2w_runtime.errors import UserError
from p2w_runtime.recording import open_run
from p2w_runtime.store import open_store
from tests.helpers.exec_support import TASK, p2w_rt
from tests.helpers.seals_support import rows

ENDPOINT = ("--base-url", "http://127.0.0.1:9/v1")  # never called: the agent asks no model
OTHER = "Lena_Fischer_A1"
UNSELECTED = "personalization_1/Tomas_Reyes_C1.json"


def _edit(task_file: Path) -> None:
    """Another intent: another task, under the same id."""
    data = json.loads(task_file.read_text())
    task_file.write_text(json.dumps({**data, "intent": data["intent"] + " Edited."}))


def _agent(tmp_path: Path) -> str:
    script = tmp_path / "agent.sh"
    script.write_text("exit 0\n")
    return f"sh {script}"


async def _cli(db: Path, *args: str) -> tuple[int, str, str]:
    done = await asyncio.to_thread(p2w_rt, db, *args)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout, done.stderr


async def _resumed_by_record_exec(db: Path, agent: str, *more: str) -> None:
    """``record --exec --resume api`` records the task the script left, verified, the run completed."""
    code, out, err = await _cli(db, "record", "--resume", "api", "--exec", agent, *ENDPOINT, *more)
    assert code == 0 and "1 kept from before" in out and "1 no_answer" in out, err
    assert (await _cli(db, "verify", "api"))[0] == 0
    (run,) = [json.loads(line) for line in (await _cli(db, "runs", "--json"))[1].splitlines()]
    assert (run["status"], run["episodes"]) == ("completed", 2)


async def test_a_run_a_script_opened_on_a_task_folder_resumes_under_record_exec(tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    async with open_store(db) as store:
        tasks = load_tasks(sample_tasks_dir())
        async with await open_run(
            store, label="api", agent="exec:agent.sh", model="m", tasks=tasks, only=[TASK, OTHER]
        ) as run:
            async with run.episode(OTHER) as episode:
                await episode.observe(url="http://search.p2w.test/")
                await episode.end("no_answer")
            await run.close(interrupted=True)  # the script stops with TASK to do
    await _resumed_by_record_exec(db, _agent(tmp_path))


async def test_a_run_record_exec_started_states_its_task_folder_and_a_script_resumes_it(tmp_path: Path) -> None:
    db, folder = tmp_path / "p2w.db", tmp_path / "tasks"
    code, _, err = await _cli(db, "record", "--exec", _agent(tmp_path), *ENDPOINT, "--model", "m", "--task", TASK)
    assert code == 0, err
    shutil.copytree(sample_tasks_dir(), folder)
    _edit(folder / UNSELECTED)  # a task the run neither records nor carries: the folder still holds its files
    async with open_store(db) as store:
        (info,) = await list_runs(store)
        tasks = load_tasks(sample_tasks_dir())
        assert (info.started.dataset_id, info.started.dataset_hash) == (tasks.dataset_id, tasks.content_hash)
        for given in (tasks, load_tasks(folder)):
            async with await open_run(
                store, label=info.label, agent="exec:agent.sh", model="m", tasks=given, only=[TASK], resume=True
            ) as run:
                assert run.todo() == []
        before = rows(db, "SELECT count(*) FROM events")
        with pytest.raises(
            UserError, match=rf"recorded with other settings: tasks {OTHER},{TASK} \(recorded: {TASK}\)$"
        ):
            await open_run(store, label=info.label, agent="exec:agent.sh", model="m", tasks=tasks, resume=True,
                           only=[TASK, OTHER])  # fmt: skip
        _edit(folder / "personalization_2" / f"{TASK}.json")
        with pytest.raises(UserError, match=r"recorded with other settings: task files persona2web@\w+ \(recorded: "):
            await open_run(store, label=info.label, agent="exec:agent.sh", model="m", tasks=load_tasks(folder),
                           only=[TASK], resume=True)  # fmt: skip
        assert rows(db, "SELECT count(*) FROM events") == before


async def test_a_run_stored_with_the_hash_of_its_selection_still_resumes_both_ways(tmp_path: Path) -> None:
    """As ``record --exec`` opened its runs before: the selected tasks as a list, so their hash, not the folder's."""
    db, tasks = tmp_path / "p2w.db", load_tasks(sample_tasks_dir())
    selected = [tasks.get(TASK), tasks.get(OTHER)]
    async with open_store(db) as store:
        async with await open_run(
            store, label="api", agent="exec:agent.sh", model="m", tasks=selected, dataset_id=tasks.dataset_id,
            carried=carry_dataset(tasks, selected, None),
        ) as run:  # fmt: skip
            async with run.episode(OTHER) as episode:
                await episode.observe(url="http://search.p2w.test/")
                await episode.end("no_answer")
            await run.close(interrupted=True)
        (info,) = await list_runs(store)
        assert info.started.dataset_hash != tasks.content_hash
        async with await open_run(  # its tasks named in another order: the same selection
            store, label="api", agent="exec:agent.sh", model="m", tasks=tasks, only=[OTHER, TASK], resume=True
        ) as resumed:
            assert [t.task_id for t in resumed.todo()] == [TASK]
            await resumed.close(interrupted=True)
    await _resumed_by_record_exec(db, _agent(tmp_path))
