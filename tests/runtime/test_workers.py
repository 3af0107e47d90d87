"""`record --label L --worker`: four worker processes on one PostgreSQL store record one run; one is killed with
SIGKILL mid-episode, its lease runs out, another worker closes the half episode as abandoned and records the task
again. Real Chromium on the demo sites, the scripted LLM."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.agent._worker import ABANDONED_DETAIL
from p2w_runtime.domain import episodes_of, find_run
from p2w_runtime.store import open_store, verify_store
from p2w_runtime.testing import ScriptedLlm
from p2w_runtime.testing.postgres import PostgresServer
from tests.helpers.paths import REPO
from tests.helpers.sample_llm import sample_agent_llm

TASKS = 6
LEASE_S = 4


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLlm]:
    with sample_agent_llm() as server:
        yield server


async def _running_episode(url: str, pids: set[int]) -> int | None:
    """The pid of a live worker holding a task whose episode has started and not finished yet."""
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch(
            "SELECT w.pid FROM work_items w WHERE NOT w.done AND w.owner IS NOT NULL AND EXISTS ("
            " SELECT 1 FROM events e WHERE e.type = 'episode.started' AND e.stream LIKE '%/' || w.task_id"
            " AND NOT EXISTS (SELECT 1 FROM events f WHERE f.stream = e.stream AND f.type = 'episode.finished')"
            " AND (SELECT count(*) FROM events s WHERE s.stream = e.stream) >= 3)"
        )
    except asyncpg.UndefinedTableError:
        return None
    finally:
        await conn.close()
    return next((row["pid"] for row in rows if row["pid"] in pids), None)


def test_four_workers_record_one_run_and_survive_a_kill(
    postgres_server: PostgresServer, llm: ScriptedLlm, tmp_path: Path
) -> None:
    url = postgres_server.fresh_database()
    args = ["--db", url, "record", "--model", "scripted-model", "--base-url", llm.base_url, "--api-key", "sk-x"]
    args += ["--scheme", "on-demand", "--limit", str(TASKS), "--concurrency", "1", "--label", "shared", "--worker"]
    env = {**os.environ, "PYTHONPATH": str(REPO), "P2W_WORKER_LEASE_S": str(LEASE_S)}
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", "from p2w_rt.cli import main; main()", *args],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        for _ in range(4)
    ]
    try:
        deadline = time.monotonic() + 240
        victim = None
        while victim is None and time.monotonic() < deadline:
            victim = asyncio.run(_running_episode(url, {w.pid for w in workers if w.poll() is None}))
            time.sleep(0.2)
        assert victim is not None, "no worker was ever seen mid-episode"
        os.kill(victim, signal.SIGKILL)
        for w in workers:
            w.wait(timeout=max(1.0, deadline + 240 - time.monotonic()))
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
    survivors = [w for w in workers if w.pid != victim]
    for w in survivors:
        assert w.returncode == 0, w.stderr.read().decode() if w.stderr else ""

    async def check() -> None:
        async with open_store(url, create=False, read_only=True) as store:
            run = await find_run(store, "shared")
            assert run.status == "completed"
            attempts = await episodes_of(store, run.run_id, every_attempt=True)
            counted_refs = await episodes_of(store, run.run_id)
            assert len(counted_refs) == TASKS == len({r.task_id for r in counted_refs})
            abandoned = [a for a in attempts if a.end_reason == "aborted"]
            assert len(abandoned) == 1 and abandoned[0] not in counted_refs
            (finished,) = [e async for e in store.read_stream(abandoned[0].stream) if e.type == "episode.finished"]
            assert finished.payload["detail"] == ABANDONED_DETAIL
            retried = [a for a in counted_refs if a.task_id == abandoned[0].task_id]
            assert retried[0].stream.endswith("#2")
            assert len(attempts) == TASKS + 1
            ends = [e async for e in store.read_all(stream_prefix=run.run_id, types=["run.finished"])]
            assert len(ends) == 1
            assert (await verify_store(store)).ok
            assert all(i.done for i in await store.work_items(run.run_id))

    asyncio.run(check())
    progress = CliRunner().invoke(main, ["--db", url, "runs", "--progress", "shared"])
    assert progress.exit_code == 0 and f"shared: {TASKS}/{TASKS} done" in progress.output
    rows = [
        json.loads(line)
        for line in CliRunner()
        .invoke(main, ["--db", url, "runs", "--progress", "shared", "--json"])
        .output.splitlines()
    ]
    assert sum(r["aborted"] for r in rows) == 1 and sum(r["attempts"] for r in rows) == TASKS + 1


def test_a_worker_refuses_to_join_a_finished_run_not_recorded_by_workers(tmp_path: Path) -> None:
    db = tmp_path / "w.db"
    CliRunner().invoke(
        main, ["--db", str(db), "import-trajectories", "--format", "p2w-agentoccam", "--examples", "--label", "done"]
    )
    args = ["--db", str(db), "record", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--api-key", "sk-x"]
    result = CliRunner().invoke(main, [*args, "--limit", "1", "--label", "done", "--worker"])
    assert result.exit_code != 0
    assert "is completed and was not recorded by workers" in result.output
    no_label = CliRunner().invoke(main, [*args, "--worker"])
    assert no_label.exit_code == 2 and "--worker needs --label" in no_label.output


def test_progress_shows_each_task_and_each_worker(tmp_path: Path) -> None:
    from p2w_runtime.store import ClaimHolder
    from tests.helpers.builders import build_run

    db = tmp_path / "p.db"
    tasks = ["Ann_Lee_A3", "Ann_Lee_B3", "Ann_Lee_C3", "Ann_Lee_D3"]

    async def make() -> None:
        async with open_store(db) as store:
            run_id = await build_run(store, "prog", tuple(tasks[:2]))
            await store.seed_work(run_id, tasks)
            a, b = ClaimHolder("a", "m1", 11, 0.0), ClaimHolder("b", "m2", 22, 0.0)
            for task in tasks[:2]:
                assert await store.claim_work(run_id, a, 60) == task
                await store.finish_work(run_id, task, a)
            assert await store.claim_work(run_id, b, 60) == "Ann_Lee_C3"  # running on m2:22
            assert await store.claim_work(run_id, b, -1) == "Ann_Lee_D3"  # its lease already ran out

    asyncio.run(make())
    shown = CliRunner().invoke(main, ["--db", str(db), "runs", "--progress", "prog"])
    assert shown.exit_code == 0, shown.output
    assert "prog: 2/4 done, 1 running, 1 abandoned (lease expired), 0 to do" in shown.output
    assert "m1:11" in shown.output and "m2:22" in shown.output
    rows = [
        json.loads(line)
        for line in CliRunner()
        .invoke(main, ["--db", str(db), "runs", "--progress", "prog", "--json"])
        .output.splitlines()
    ]
    assert [(r["task_id"], r["state"], r["end_reason"]) for r in rows] == [
        ("Ann_Lee_A3", "done", "answered"),
        ("Ann_Lee_B3", "done", "answered"),
        ("Ann_Lee_C3", "running", None),
        ("Ann_Lee_D3", "abandoned", None),
    ]
    plain = CliRunner().invoke(main, ["--db", str(db), "runs", "--progress", "nope"])
    assert plain.exit_code != 0


def test_workers_starting_together_do_not_take_each_other_for_a_lone_recorder(tmp_path: Path) -> None:
    """Each joiner checks that no process records the run alone; the check only looks, so workers checking at the
    same instant see no holder in one another (CI once refused a worker, naming another worker as the recorder)."""
    checks = (
        "import asyncio, sys, time\n"
        "from p2w_runtime.domain import check_not_recorded_alone\n"
        "from p2w_runtime.store import open_store\n"
        "async def main() -> None:\n"
        "    async with open_store(sys.argv[1]) as store:\n"
        "        await asyncio.sleep(float(sys.argv[2]) - time.time())\n"  # all start checking at one instant
        "        while time.time() < float(sys.argv[2]) + 3:\n"
        "            await check_not_recorded_alone(store, 'shared')\n"
        "asyncio.run(main())\n"
    )
    db = str(tmp_path / "p2w.db")
    asyncio.run(_create(db))
    at = str(time.time() + 5)
    command = [sys.executable, "-c", checks, db, at]
    procs = [subprocess.Popen(command, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], errors


async def _create(db: str) -> None:
    async with open_store(db):
        pass
