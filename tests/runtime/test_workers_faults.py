"""`record --worker` where its guarantees are weakest: a worker stopped or killed while it creates the run, a run
left without work items, a busy CPU with one worker killed and one interrupted, and the server itself killed.

Real processes throughout: PostgreSQL (`p2w_runtime/testing/postgres.py`), `p2w-rt record --worker` in real
Chromium on the demo sites with the scripted LLM, real SIGKILL / SIGSTOP / SIGINT, real CPU spinners.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest

from p2w_runtime.agent import AgentConfig
from p2w_runtime.agent._run import NewRun
from p2w_runtime.agent._worker import ABANDONED_DETAIL, join_run
from p2w_runtime.data import load_tasks
from p2w_runtime.demo.sample import sample_tasks_dir
from p2w_runtime.store import open_store
from p2w_runtime.testing import ScriptedLlm
from p2w_runtime.testing.postgres import PostgresServer
from tests.helpers.sample_llm import sample_agent_llm
from tests.helpers.workers_support import (
    backend_of,
    busy_cpu,
    first_claim,
    reaped,
    run_counts,
    running_episode,
    start_worker,
    wait_all,
    worker_args,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLlm]:
    with sample_agent_llm() as server:
        yield server


async def _poll(what: str, timeout_s: float, check: object) -> float:
    """Seconds until the coroutine function ``check`` returns a true value; fails after ``timeout_s``."""
    assert callable(check)
    start = time.monotonic()
    while not await check():
        assert time.monotonic() - start < timeout_s, f"{what}: not within {timeout_s} s"
        await asyncio.sleep(0.05)
    return time.monotonic() - start


@pytest.mark.parametrize("fault", ["frozen", "killed"])
def test_a_worker_stopped_inside_run_creation_delays_the_others_by_seconds(
    postgres_server: PostgresServer, llm: ScriptedLlm, tmp_path: Path, fault: str
) -> None:
    """The victim is caught inside the transaction that creates the run (it holds the write lock and waits for the
    label, which the test holds uncommitted), then frozen (SIGSTOP: what the server sees of a machine cut off) or
    killed (SIGKILL). The frozen one's session is ended by the server after its idle-in-transaction timeout, the
    killed one's at once; either way two workers started after it create the run and record it whole."""
    url = postgres_server.fresh_database()
    tasks, idle_tx_s = 2, 3.0

    async def scenario() -> None:
        async with open_store(url):  # the tables, so that the test can hold the label first
            pass
        blocker = await asyncpg.connect(url)
        await blocker.execute("BEGIN; INSERT INTO run_labels (label, run_id) VALUES ('shared', 'blocker')")
        args = worker_args(url, llm, tasks)
        victim = start_worker(args, tmp_path, lease_s=4, idle_tx_s=idle_tx_s)
        with reaped([victim]) as workers:
            watch = await asyncpg.connect(url)

            async def waits_for_label() -> bool:
                row = await backend_of(watch, victim.pid)
                return row is not None and row["wait_event_type"] == "Lock" and row["xact_start"] is not None

            await _poll("the victim inside its run-creation transaction", 120, waits_for_label)
            os.kill(victim.pid, signal.SIGSTOP if fault == "frozen" else signal.SIGKILL)
            await blocker.execute("ROLLBACK")
            await blocker.close()
            started = time.monotonic()
            workers += [start_worker(args, tmp_path, lease_s=4) for _ in range(2)]
            others = workers[1:]
            gone: list[float] = []  # when the server ended the victim's session
            waited: set[int] = set()  # other workers seen queueing for a lock meanwhile

            async def claimed_yet() -> bool:
                for w in others:
                    row = await backend_of(watch, w.pid)
                    if row is not None and row["wait_event_type"] == "Lock":
                        waited.add(w.pid)
                if not gone and await backend_of(watch, victim.pid) is None:
                    gone.append(time.monotonic() - started)
                return await first_claim(watch)

            claimed = await _poll("a first claim by the other workers", 180, claimed_yet)
            assert gone and gone[0] <= claimed  # the victim's session ended first: it held the way
            print(
                f"\n{fault} creator: its session ended {gone[0]:.1f} s after the others started, first claim at"
                f" {claimed:.1f} s; {len(waited)} of {len(others)} others seen waiting for a lock"
            )
            await asyncio.to_thread(wait_all, others, started + 240)
            if fault == "frozen":
                assert victim.alive()  # stopped all along: the server, not the victim, let go
            victim.process.kill()
            await watch.close()
        for w in others:
            assert w.process.returncode == 0, w.report()
        counts = await run_counts(url)
        assert counts.status == "completed" and counts.verified and counts.all_done and counts.finished == 1
        assert sorted(r.task_id for r in counts.counted) == sorted({r.task_id for r in counts.attempts})
        assert len(counts.counted) == tasks == counts.tasks == len(counts.attempts)

    asyncio.run(scenario())


def test_a_run_left_without_work_items_is_completed_by_the_next_worker(
    postgres_server: PostgresServer, llm: ScriptedLlm, tmp_path: Path
) -> None:
    """The run's creator died after `run.started`, before it seeded the work items: the next worker seeds them
    (the run's recorded tasks) and records the run; a worker that selected other tasks is refused in one line."""
    url = postgres_server.fresh_database()
    dataset = load_tasks(sample_tasks_dir())
    tasks = list(dataset)[:2]

    async def died_after_creating() -> None:
        async with open_store(url) as store:
            config = AgentConfig(scheme="no-history")
            new = NewRun(tasks, dataset, "shared", "scripted-model", config, {"tasks": [t.task_id for t in tasks]})
            run_id = await join_run(store, new)
            assert await store.work_items(run_id) == []

    asyncio.run(died_after_creating())
    other = start_worker(worker_args(url, llm, 3), tmp_path, lease_s=4)
    joiner = start_worker(worker_args(url, llm, 2), tmp_path, lease_s=4)
    with reaped([other, joiner]):
        wait_all([other, joiner], time.monotonic() + 240)
    assert other.process.returncode == 1
    (line,) = other.stderr_lines()
    assert line.startswith("error: run shared (") and "records 2 tasks" in line and "selected 3" in line
    assert joiner.process.returncode == 0, joiner.report()
    counts = asyncio.run(run_counts(url))
    assert counts.status == "completed" and counts.verified and counts.all_done and counts.finished == 1
    assert sorted(r.task_id for r in counts.counted) == sorted(t.task_id for t in tasks) and counts.tasks == 2


def test_four_workers_on_a_busy_machine_one_killed_one_interrupted(
    postgres_server: PostgresServer, llm: ScriptedLlm, tmp_path: Path
) -> None:
    """Four spinners keep both cores busy the whole time. Of four workers, one is killed with SIGKILL mid-episode,
    another gets SIGINT mid-episode: the interrupted one closes its episode as aborted, gives its task back before
    its lease runs out, and exits 130; every task ends with exactly one counted episode."""
    url = postgres_server.fresh_database()
    tasks, lease_s = 5, 10.0

    async def scenario() -> None:
        with busy_cpu(4):
            start = time.monotonic()
            workers = [start_worker(worker_args(url, llm, tasks), tmp_path, lease_s=lease_s) for _ in range(4)]
            with reaped(workers):
                watch = await asyncpg.connect(url)
                to_first = await _poll("a first claim", 240, lambda: first_claim(watch))
                pids = {w.pid: w for w in workers}

                async def mid_episode(excluded: set[int]) -> int | None:
                    alive = {pid for pid, w in pids.items() if w.alive() and pid not in excluded}
                    return await running_episode(watch, alive)

                await _poll("a worker mid-episode", 240, lambda: mid_episode(set()))
                killed = await mid_episode(set())
                assert killed is not None
                os.kill(killed, signal.SIGKILL)
                await _poll("another worker mid-episode", 240, lambda: mid_episode({killed}))
                stopped = await mid_episode({killed})
                assert stopped is not None
                task, owner, lease_until = await watch.fetchrow(
                    "SELECT task_id, owner, lease_until FROM work_items WHERE pid = $1 AND NOT done", stopped
                )
                os.kill(stopped, signal.SIGINT)
                interrupted = time.monotonic()

                async def released() -> bool:  # free, or already another worker's
                    sql = "SELECT owner IS DISTINCT FROM $2 FROM work_items WHERE task_id = $1"
                    return bool(await watch.fetchval(sql, task, owner))

                to_release = await _poll("the interrupted worker's task given back", 60, released)
                assert time.time() < lease_until  # given back, not expired
                aborted = await watch.fetchval(
                    "SELECT count(*) FROM events WHERE type = 'episode.finished' AND stream LIKE '%/' || $1 || '%'"
                    " AND payload::jsonb ->> 'detail' = 'run interrupted'",
                    task,
                )
                assert aborted == 1
                await asyncio.to_thread(pids[stopped].process.wait, 60)
                to_exit = time.monotonic() - interrupted
                survivors = [w for w in workers if w.pid not in (killed, stopped)]
                await asyncio.to_thread(wait_all, survivors, time.monotonic() + 300)
                shares = Counter(r["pid"] for r in await watch.fetch("SELECT pid FROM work_items WHERE done"))
                await watch.close()
            total = time.monotonic() - start
        print(
            f"\nbusy CPU, 4 workers, {tasks} tasks: first claim {to_first:.1f} s after start; SIGINT -> task given"
            f" back {to_release:.2f} s, process exited {to_exit:.2f} s; whole run {total:.0f} s; tasks finished per"
            f" worker {sorted(shares.values(), reverse=True)} (killed {shares.get(killed, 0)},"
            f" interrupted {shares.get(stopped, 0)})"
        )
        assert pids[stopped].process.returncode == 130 and "interrupted" in pids[stopped].stderr_lines()[-1]
        for w in survivors:
            assert w.process.returncode == 0, w.report()
        counts = await run_counts(url)
        assert counts.status == "completed" and counts.verified and counts.all_done and counts.finished == 1
        assert len(counts.counted) == tasks == len({r.task_id for r in counts.counted})
        aborted_refs = [a for a in counts.attempts if a.end_reason == "aborted"]
        assert len(aborted_refs) == 2 and not set(aborted_refs) & set(counts.counted)
        assert len(counts.attempts) == tasks + 2
        details = []
        async with open_store(url, create=False, read_only=True) as store:
            for ref in aborted_refs:
                details += [
                    e.payload["detail"] async for e in store.read_stream(ref.stream) if e.type == "episode.finished"
                ]
        assert sorted(details) == sorted([ABANDONED_DETAIL, "run interrupted"])

    asyncio.run(scenario())


def test_the_server_killed_mid_append_then_the_same_command_continues(llm: ScriptedLlm, tmp_path: Path) -> None:
    """The PostgreSQL server (its own, for this test) is killed with SIGKILL while two workers append episode steps,
    then started again. Each worker exits with one line; the same command run again continues the run: every event
    committed before the crash is still there, each task ends with exactly one counted episode, nothing twice."""
    tasks = 4
    with PostgresServer() as server:
        url = server.fresh_database()
        args = worker_args(url, llm, tasks)

        async def until_mid_run() -> None:
            watch = await asyncpg.connect(url)
            try:
                await _poll("two episodes under way", 240, lambda: _two_started(watch))
            finally:
                await watch.close()

        first = [start_worker(args, tmp_path, lease_s=3) for _ in range(2)]
        with reaped(first):
            asyncio.run(until_mid_run())
            server.kill()
            wait_all(first, time.monotonic() + 60)
        server.restart()
        for w in first:
            assert w.process.returncode not in (0, None), w.report()
            assert len(w.stderr_lines()) == 1, w.report()  # one line each, naming the lost connection
            (line,) = w.stderr_lines()
            assert line.startswith("error: ") and "127.0.0.1" in line, w.report()

        async def committed() -> dict[str, str]:
            conn = await asyncpg.connect(url)
            try:
                return {r["event_id"]: r["hash"] for r in await conn.fetch("SELECT event_id, hash FROM events")}
            finally:
                await conn.close()

        before = asyncio.run(committed())
        again = [start_worker(args, tmp_path, lease_s=3) for _ in range(2)]
        with reaped(again):
            wait_all(again, time.monotonic() + 240)
        for w in again:
            assert w.process.returncode == 0, w.report()
        after = asyncio.run(committed())
        assert {k: after.get(k) for k in before} == before  # nothing committed was lost
        counts = asyncio.run(run_counts(url))
        assert counts.status == "completed" and counts.verified and counts.all_done and counts.finished == 1
        finished_by_itself = Counter(r.task_id for r in counts.attempts if r.end_reason not in (None, "aborted"))
        assert finished_by_itself == Counter({r.task_id: 1 for r in counts.counted}) and len(counts.counted) == tasks
        print(
            f"\nserver killed after {len(before)} committed events; rerun: {len(after)} events,"
            f" {len(counts.attempts)} attempts for {tasks} tasks, {len(counts.counted)} counted"
        )


async def _two_started(conn: asyncpg.Connection) -> bool:
    try:
        started = await conn.fetchval("SELECT count(*) FROM events WHERE type = 'episode.started'")
        steps = await conn.fetchval("SELECT count(*) FROM events WHERE type = 'observation'")
    except asyncpg.UndefinedTableError:
        return False
    return bool(started >= 2 and steps >= 3)


def test_a_worker_frozen_past_its_lease_loses_the_task_and_goes_on(
    postgres_server: PostgresServer, llm: ScriptedLlm, tmp_path: Path
) -> None:
    """SIGSTOP mid-episode for four leases, then SIGCONT: the other worker has taken the task over meanwhile; the
    woken one finds its lease gone, stops its episode and carries on instead of failing; the run is whole."""
    url = postgres_server.fresh_database()
    tasks, lease_s = 3, 3.0
    workers = [start_worker(worker_args(url, llm, tasks), tmp_path, lease_s=lease_s) for _ in range(2)]

    async def freeze_one() -> int:
        watch = await asyncpg.connect(url)
        try:
            alive = {w.pid for w in workers}
            await _poll("a worker mid-episode", 240, lambda: running_episode(watch, alive))
            frozen = await running_episode(watch, alive)
            assert frozen is not None
            task = await watch.fetchval("SELECT task_id FROM work_items WHERE pid = $1 AND NOT done", frozen)
            os.kill(frozen, signal.SIGSTOP)

            async def taken_over() -> bool:
                sql = "SELECT pid IS DISTINCT FROM $2 FROM work_items WHERE task_id = $1"
                return bool(await watch.fetchval(sql, task, frozen))

            await _poll("the task taken over", 120, taken_over)
            os.kill(frozen, signal.SIGCONT)
            return frozen
        finally:
            await watch.close()

    with reaped(workers):
        frozen = asyncio.run(freeze_one())
        wait_all(workers, time.monotonic() + 240)
    for w in workers:
        assert w.process.returncode == 0, w.report()
    assert any("lost the lease" in line for line in next(w for w in workers if w.pid == frozen).stderr_lines())
    counts = asyncio.run(run_counts(url))
    assert counts.status == "completed" and counts.verified and counts.all_done and counts.finished == 1
    assert len(counts.counted) == tasks == len({r.task_id for r in counts.counted})
    assert [a.end_reason for a in counts.attempts].count("aborted") == 1 and len(counts.attempts) == tasks + 1
