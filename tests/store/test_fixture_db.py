"""A database written by an earlier version of the store still opens, verifies and judges with today's code.

``tests/data/fixture_dbs/v1.db`` was written once by ``make_v1.py`` with the code of its time and is never
regenerated; ``v1.json`` beside it pins what that code saw. Each test works on a copy: a writable open may
add what a newer layout needs (a table, a trigger), and the committed file must stay as it was written.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.replay.derived import PassSettings
from p2w_rt.replay.judges import JudgeContext, make_judge
from p2w_rt.schemas import NewEvent, Rationale, blob_hash
from p2w_runtime.domain import episodes_of, list_runs
from p2w_runtime.domain.trajectory import load_trajectories
from p2w_runtime.store import head_digest, open_store, verify_store
from tests.helpers.paths import DATA

FIXTURES = DATA / "fixture_dbs"
FACTS = json.loads((FIXTURES / "v1.json").read_text())


@pytest.fixture
def v1(tmp_path: Path) -> Iterator[Path]:
    committed = FIXTURES / "v1.db"
    before = hashlib.sha256(committed.read_bytes()).hexdigest()
    copy = tmp_path / "v1.db"
    shutil.copyfile(committed, copy)
    yield copy
    assert hashlib.sha256(committed.read_bytes()).hexdigest() == before


def p2w(db: Path, *args: str):
    return CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)


def test_runs_show_and_verify_read_the_old_database(v1: Path) -> None:
    runs = [json.loads(line) for line in p2w(v1, "runs", "--json").output.splitlines()]
    assert {r["label"]: r["run_id"] for r in runs} == {k: v["run_id"] for k, v in FACTS["runs"].items()}
    assert all(r["episodes"] == 3 and r["status"] == "completed" for r in runs)
    for label, run in FACTS["runs"].items():
        shown = p2w(v1, "show", label, "--json")
        assert shown.exit_code == 0
        assert [json.loads(line)["task_id"] for line in shown.output.splitlines()] == run["counted"]
    verified = p2w(v1, "verify")
    assert verified.exit_code == 0, verified.output


async def test_the_old_database_holds_what_its_writer_saw(v1: Path) -> None:
    async with open_store(v1, create=False) as store:
        assert await store.count() == (FACTS["events"], FACTS["blobs"])
        assert (await verify_store(store)).ok
        for run in await list_runs(store):
            facts = FACTS["runs"][run.label]
            assert await head_digest(store, run.run_id) == facts["head_digest"]
            assert [e.task_id for e in await episodes_of(store, run.run_id)] == facts["counted"]
        page = await store.get_blob(FACTS["page_blob"])
        assert blob_hash(page) == FACTS["page_blob"]
        # and it keeps growing: the chain continues from the old head
        (pages,) = await store.list_streams("pages")
        (more,) = await store.append([NewEvent(stream="pages", payload=Rationale(step=1, source="planner", text="x"))])
        assert (more.seq, more.prev_hash) == (2, pages.last_hash)
        assert (await verify_store(store)).ok


async def test_old_trajectories_load_and_judge_in_memory(v1: Path) -> None:
    judge = make_judge("rubric-rules", PassSettings())
    async with open_store(v1, create=False, read_only=True) as store:
        for run in FACTS["runs"].values():
            trajectories = [t async for t in load_trajectories(store, run["run_id"])]
            assert [t.task_id for t in trajectories] == run["counted"]
            for t in trajectories:
                assert t.steps, f"{t.stream} lost its steps"
                verdict = await judge.judge(t, JudgeContext(get_blob=store.get_blob, llm=None))
                assert verdict.status == "ok" and verdict.points and verdict.metrics, t.stream
