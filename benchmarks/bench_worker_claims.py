"""Work-item claims per second on PostgreSQL: 4 processes drain N items (claim, then mark done), through the store
(`claim_work` + `finish_work`) and as the same two statements on a raw asyncpg connection (one `UPDATE ... WHERE
task_id = (SELECT ... FOR UPDATE SKIP LOCKED) RETURNING task_id` per claim, one `UPDATE` per done: what the store
sends), idle and with the CPU kept busy by spinner processes.

    .venv/bin/python benchmarks/bench_worker_claims.py [--items 400] [--spinners 4] [--repeat 3]

Prints items/s and the store's ratio to raw SQL in the same run (docs/design/postgres.md, "Workers under faults").
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import asyncpg

from p2w_runtime.store import connect_store, this_process
from p2w_runtime.testing.postgres import PostgresServer

RUN = "bench"
RAW_CLAIM = (
    "UPDATE work_items SET owner = $1, lease_until = $2 WHERE run_id = $3 AND task_id = ("
    " SELECT task_id FROM work_items WHERE run_id = $3 AND NOT done AND (owner IS NULL OR lease_until < $4)"
    " ORDER BY task_id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING task_id"
)
SPIN = (
    "import os, sys, time\n"
    "end, parent = time.time() + float(sys.argv[1]), os.getppid()\n"
    "while time.time() < end and os.getppid() == parent:\n"
    "    pass\n"
)


async def _store_claimer(url: str) -> int:
    store = await connect_store(url)
    me, done = this_process(), 0
    while (task := await store.claim_work(RUN, me, 60)) is not None:
        await store.finish_work(RUN, task, me)
        done += 1
    await store.close()
    return done


async def _raw_claimer(url: str) -> int:
    conn = await asyncpg.connect(url.replace("postgresql+asyncpg://", "postgresql://"))
    me, done = this_process().owner, 0
    while True:
        now = time.time()
        task = await conn.fetchval(RAW_CLAIM, me, now + 60, RUN, now)
        if task is None:
            break
        await conn.execute(
            "UPDATE work_items SET done = true WHERE run_id = $1 AND task_id = $2 AND owner = $3", RUN, task, me
        )
        done += 1
    await conn.close()
    return done


def _process(kind: str, url: str, out: multiprocessing.Queue) -> None:
    out.put(asyncio.run(_store_claimer(url) if kind == "store" else _raw_claimer(url)))


def drain(server: PostgresServer, kind: str, items: int) -> float:
    url = server.fresh_database()

    async def seed() -> None:
        store = await connect_store(url)
        await store.seed_work(RUN, [f"t{i:05d}" for i in range(items)])
        await store.close()

    asyncio.run(seed())
    out: multiprocessing.Queue = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=_process, args=(kind, url, out)) for _ in range(4)]
    start = time.perf_counter()
    for p in procs:
        p.start()
    done = [out.get() for _ in procs]
    for p in procs:
        p.join()
    assert sum(done) == items, done
    return time.perf_counter() - start


@contextmanager
def busy(spinners: int) -> Iterator[None]:
    procs = [subprocess.Popen([sys.executable, "-c", SPIN, "600"]) for _ in range(spinners)]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=400)
    parser.add_argument("--spinners", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; median of {args.repeat}")
    with PostgresServer() as server:
        for spinners in (0, args.spinners):
            with busy(spinners):
                store_s = statistics.median(drain(server, "store", args.items) for _ in range(args.repeat))
                raw_s = statistics.median(drain(server, "raw", args.items) for _ in range(args.repeat))
            print(
                f"{spinners} spinners: 4 processes, {args.items} items: store {args.items / store_s:,.0f} claims/s,"
                f" raw SQL {args.items / raw_s:,.0f} claims/s: {raw_s / store_s:.2f}x"
                f" (load average {os.getloadavg()[0]:.1f})"
            )


if __name__ == "__main__":
    main()
