"""Real `record --worker` processes against the test PostgreSQL server, a busy CPU, and what the tests read back.

Workers run `--scheme no-history` (no embedder to load) on the demo sites with the scripted LLM, so that a test
spends its time on the faults, not on start-up. Each worker's session names its process (`application_name`
`p2w-rt/PID`), which is how a test finds the backend of the worker it is about to stop.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from p2w_runtime.domain import EpisodeRef, episodes_of, find_run
from p2w_runtime.store import open_store, verify_store
from p2w_runtime.testing import ScriptedLlm
from tests.helpers.paths import REPO

SPIN = (
    "import os, sys, time\n"
    "end, parent = time.time() + float(sys.argv[1]), os.getppid()\n"
    "while time.time() < end and os.getppid() == parent:\n"
    "    pass\n"
)
"""A CPU spinner that stops by itself: at its deadline, or as soon as the test process that started it is gone."""


@contextmanager
def busy_cpu(processes: int, seconds: float = 240.0) -> Iterator[None]:
    """``processes`` spinners keep every core busy while the block runs; stopped at its end, whatever happens."""
    spinners = [subprocess.Popen([sys.executable, "-c", SPIN, str(seconds)]) for _ in range(processes)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def worker_args(url: str, llm: ScriptedLlm, tasks: int, label: str = "shared") -> list[str]:
    args = ["--db", url, "record", "--model", "scripted-model", "--base-url", llm.base_url, "--api-key", "sk-x"]
    return [*args, "--scheme", "no-history", "--limit", str(tasks), "--concurrency", "1", "--label", label, "--worker"]


@dataclass
class Worker:
    """One `p2w-rt record --worker` process; its output goes to files (a pipe nobody reads could block it)."""

    process: subprocess.Popen[bytes]
    out: Path
    err: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def stderr_lines(self) -> list[str]:
        return [line for line in self.err.read_text(errors="replace").splitlines() if line.strip()]

    def report(self) -> str:
        return f"pid {self.pid} rc {self.process.returncode}: {self.err.read_text(errors='replace')[-3000:]}"


def start_worker(args: Sequence[str], folder: Path, *, lease_s: float, idle_tx_s: float = 30.0) -> Worker:
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "P2W_WORKER_LEASE_S": str(lease_s),
        "P2W_PG_IDLE_IN_TRANSACTION_S": str(idle_tx_s),
    }
    n = len(list(folder.glob("w*.err")))
    out, err = folder / f"w{n}.out", folder / f"w{n}.err"
    with out.open("wb") as o, err.open("wb") as e:
        process = subprocess.Popen(
            [sys.executable, "-c", "from p2w_rt.cli import main; main()", *args],
            cwd=folder,
            stdout=o,
            stderr=e,
            env=env,
        )
    return Worker(process, out, err)


@contextmanager
def reaped(workers: list[Worker]) -> Iterator[list[Worker]]:
    """Every worker killed at the end of the block if it is still running (a failed test leaves none behind)."""
    try:
        yield workers
    finally:
        for w in workers:
            if w.alive():
                w.process.kill()
            w.process.wait()


async def backend_of(conn: asyncpg.Connection, pid: int) -> asyncpg.Record | None:
    """The session of worker ``pid`` (what it is waiting for, if anything)."""
    return await conn.fetchrow(
        "SELECT pid, state, wait_event_type, xact_start FROM pg_stat_activity WHERE application_name = $1",
        f"p2w-rt/{pid}",
    )


async def first_claim(conn: asyncpg.Connection) -> bool:
    try:
        return bool(await conn.fetchval("SELECT count(*) FROM work_items WHERE owner IS NOT NULL OR done"))
    except asyncpg.UndefinedTableError:
        return False


async def running_episode(conn: asyncpg.Connection, pids: set[int]) -> int | None:
    """The pid of a worker in ``pids`` holding a task whose episode has started, has a step, and has not finished."""
    try:
        rows = await conn.fetch(
            "SELECT w.pid, w.task_id FROM work_items w WHERE NOT w.done AND w.owner IS NOT NULL AND EXISTS ("
            " SELECT 1 FROM events e WHERE e.type = 'episode.started' AND e.stream LIKE '%/' || w.task_id || '%'"
            " AND NOT EXISTS (SELECT 1 FROM events f WHERE f.stream = e.stream AND f.type = 'episode.finished')"
            " AND (SELECT count(*) FROM events s WHERE s.stream = e.stream) >= 3)"
        )
    except asyncpg.UndefinedTableError:  # no worker has opened the store yet
        return None
    return next((row["pid"] for row in rows if row["pid"] in pids), None)


@dataclass(frozen=True)
class RunCounts:
    status: str
    tasks: int
    attempts: list[EpisodeRef]
    counted: list[EpisodeRef]
    finished: int
    verified: bool
    all_done: bool


async def run_counts(url: str, label: str = "shared") -> RunCounts:
    async with open_store(url, create=False, read_only=True) as store:
        run = await find_run(store, label)
        attempts = await episodes_of(store, run.run_id, every_attempt=True)
        counted = await episodes_of(store, run.run_id)
        ends = [e async for e in store.read_all(stream_prefix=run.run_id, types=["run.finished"])]
        items = await store.work_items(run.run_id)
        return RunCounts(
            run.status,
            len(items),
            attempts,
            counted,
            len(ends),
            (await verify_store(store)).ok,
            all(i.done for i in items),
        )


def wait_all(workers: Sequence[Worker], deadline: float) -> None:
    for w in workers:
        w.process.wait(timeout=max(1.0, deadline - time.monotonic()))
