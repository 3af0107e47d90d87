"""The PostgreSQL store against raw asyncpg, in the same run, on a throwaway local server (issue 16).

1. Append, 1 writer: N events in 5-event transactions through ``store.append`` (sealing, hash chain, advisory
   lock) against the same rows inserted raw: ``executemany`` per 5 rows, ``executemany`` in one transaction,
   and ``COPY``.
2. Append, 4 writer processes at once, each to its own streams and to one shared stream: the store against
   the two ways to keep ``seq``/``position`` gap-free that were considered, both as raw SQL with the same
   statements: one advisory lock per transaction (what the store does) and "unique constraint + retry" (read
   max(position) and the head, insert, retry on a unique violation).
3. ``read_all`` of every event against a raw ``SELECT`` of the same columns.
4. Workers: 4 processes draining 400 work items with ``claim_work`` (FOR UPDATE SKIP LOCKED) + ``finish_work``.
5. With ``--record-tasks N``: ``record --worker`` on the demo sites with the scripted model (real Chromium), 1 worker
   process against 4, episodes/s of each and their ratio.

Figures are medians of ``--repeat`` runs, wall time; the machine's load is printed with them.

    python benchmarks/bench_postgres.py [--events 5000] [--read-events 30000] [--repeat 3] [--record-tasks 8]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import time
from collections.abc import Awaitable, Callable

import asyncpg

from p2w_rt.schemas import GENESIS_HASH, NewEvent, Observation, Rationale, StoredEvent
from p2w_runtime.store import EventStore, connect_store, this_process
from p2w_runtime.store._rows import event_to_row
from p2w_runtime.testing.postgres import PostgresServer

COLUMNS = [
    "position", "event_id", "stream", "seq", "type", "schema_version", "recorded_at", "causation_id", "payload",
    "blobs", "prev_hash", "hash",
]  # fmt: skip
INSERT = f"INSERT INTO events ({', '.join(COLUMNS)}) VALUES ({', '.join(f'${i + 1}' for i in range(12))})"


def events(stream: str, n: int) -> list[NewEvent]:
    text = "the user prefers window seats and vegan food; " * 20  # ~1 KB payloads
    out: list[NewEvent] = []
    for i in range(n):
        payload = (
            Observation(step=i, url=f"http://shop.p2w.test/{i}", title=text[:80])
            if i % 2
            else Rationale(step=i, source="planner", text=text)
        )
        out.append(NewEvent(stream=stream, payload=payload))
    return out


def sealed_rows(stream: str, n: int, first_position: int = 1) -> list[tuple]:
    rows, prev = [], GENESIS_HASH
    for i, new in enumerate(events(stream, n)):
        stored = StoredEvent.seal(new, seq=i + 1, prev_hash=prev, position=first_position + i)
        prev = stored.hash
        rows.append(event_to_row(stored, first_position + i))
    return rows


async def fresh(server: PostgresServer) -> str:
    url = server.fresh_database()
    store = await connect_store(url)
    await store.close()
    return url


async def timed(work: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    await work()
    return time.perf_counter() - start


# -- 1 writer ---------------------------------------------------------------------------------------
async def one_writer(server: PostgresServer, n: int) -> dict[str, float]:
    results = {}
    url = await fresh(server)
    store = await connect_store(url)
    batch = events("r/e", n)

    async def store_steps() -> None:
        for i in range(0, n, 5):
            await store.append(batch[i : i + 5])

    results["store.append, 5 per transaction"] = await timed(store_steps)
    await store.close()
    url = await fresh(server)
    store = await connect_store(url)
    results["store.append, 1 transaction"] = await timed(lambda: store.append(batch))
    await store.close()
    rows = sealed_rows("r/e", n)
    for name, how in (("raw executemany, 5 per transaction", 5), ("raw executemany, 1 transaction", n)):
        conn = await asyncpg.connect(await fresh(server))

        async def raw(conn: asyncpg.Connection = conn, how: int = how) -> None:
            for i in range(0, n, how):
                async with conn.transaction():
                    await conn.executemany(INSERT, rows[i : i + how])

        results[name] = await timed(raw)
        await conn.close()
    conn = await asyncpg.connect(await fresh(server))
    results["raw COPY, 1 transaction"] = await timed(lambda: conn.copy_records_to_table("events", records=rows))
    await conn.close()
    return results


# -- 4 writers --------------------------------------------------------------------------------------
def _writer_process(url: str, mode: str, index: int, n: int, out: multiprocessing.Queue) -> None:
    out.put(asyncio.run(_writer(url, mode, index, n)))


async def _writer(url: str, mode: str, index: int, n: int) -> tuple[float, int]:
    own, shared = events(f"w{index}", n), events("shared", n)
    retries = 0
    start = time.perf_counter()
    if mode == "store":
        store = await connect_store(url)
        for i in range(0, n, 2):
            await store.append([*own[i : i + 2], *shared[i : i + 2]])
        await store.close()
        return time.perf_counter() - start, 0
    conn = await asyncpg.connect(url)
    for i in range(0, n, 2):
        batch = [*own[i : i + 2], *shared[i : i + 2]]
        while True:
            try:
                async with conn.transaction():
                    if mode == "advisory":
                        await conn.execute("SELECT pg_advisory_xact_lock(1)")
                    await _raw_append(conn, batch)
                break
            except asyncpg.UniqueViolationError:
                retries += 1
    await conn.close()
    return time.perf_counter() - start, retries


async def _raw_append(conn: asyncpg.Connection, batch: list[NewEvent]) -> None:
    position = await conn.fetchval("SELECT coalesce(max(position), 0) FROM events")
    heads: dict[str, tuple[int, str]] = {}
    rows = []
    for new in batch:
        if new.stream not in heads:
            row = await conn.fetchrow(
                "SELECT seq, hash FROM events WHERE stream = $1 ORDER BY seq DESC LIMIT 1", new.stream
            )
            heads[new.stream] = (row["seq"], row["hash"]) if row else (0, GENESIS_HASH)
        seq, prev = heads[new.stream]
        position += 1
        stored = StoredEvent.seal(new, seq=seq + 1, prev_hash=prev, position=position)
        heads[new.stream] = (stored.seq, stored.hash)
        rows.append(event_to_row(stored, position))
    await conn.executemany(INSERT, rows)


def four_writers(server: PostgresServer, n: int, mode: str) -> tuple[float, int, int]:
    url = asyncio.run(fresh(server))
    out: multiprocessing.Queue = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=_writer_process, args=(url, mode, i, n, out)) for i in range(4)]
    start = time.perf_counter()
    for p in procs:
        p.start()
    results = [out.get() for _ in procs]
    for p in procs:
        p.join()
    wall = time.perf_counter() - start
    total = asyncio.run(_count(url))
    assert total == 8 * n, (total, 8 * n)
    return wall, sum(r[1] for r in results), total


async def _count(url: str) -> int:
    conn = await asyncpg.connect(url)
    try:
        positions = [r[0] for r in await conn.fetch("SELECT position FROM events ORDER BY position")]
        assert positions == list(range(1, len(positions) + 1)), "positions have a gap"
        return len(positions)
    finally:
        await conn.close()


# -- read -------------------------------------------------------------------------------------------
async def read(server: PostgresServer, n: int) -> dict[str, float]:
    url = await fresh(server)
    store: EventStore = await connect_store(url)
    await store.append(events("r/e", n))
    results = {"store.read_all": await timed(lambda: _drain(store))}
    await store.close()
    conn = await asyncpg.connect(url)
    sql = f"SELECT {', '.join(c for c in COLUMNS)} FROM events ORDER BY position"
    results["raw SELECT (one fetch)"] = await timed(lambda: conn.fetch(sql))
    await conn.close()
    return results


async def _drain(store: EventStore) -> int:
    return sum([1 async for _ in store.read_all()])


# -- workers ----------------------------------------------------------------------------------------
def _claimer_process(url: str, out: multiprocessing.Queue) -> None:
    out.put(asyncio.run(_claimer(url)))


async def _claimer(url: str) -> int:
    store = await connect_store(url)
    me, done = this_process(), 0
    while (task := await store.claim_work("bench", me, 60)) is not None:
        await store.finish_work("bench", task, me)
        done += 1
    await store.close()
    return done


def workers(server: PostgresServer, items: int) -> float:
    url = asyncio.run(fresh(server))

    async def seed() -> None:
        store = await connect_store(url)
        await store.seed_work("bench", [f"t{i:05d}" for i in range(items)])
        await store.close()

    asyncio.run(seed())
    out: multiprocessing.Queue = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=_claimer_process, args=(url, out)) for _ in range(4)]
    start = time.perf_counter()
    for p in procs:
        p.start()
    done = [out.get() for _ in procs]
    for p in procs:
        p.join()
    assert sum(done) == items, done
    return time.perf_counter() - start


# -- recording workers ------------------------------------------------------------------------------
def recording(server: PostgresServer, tasks: int, processes: int) -> float:
    """Wall time of ``processes`` ``record --worker`` processes recording ``tasks`` demo tasks into one run."""
    import subprocess
    import sys
    from pathlib import Path

    from p2w_runtime.data import load_tasks
    from p2w_runtime.demo.sample import sample_checks, sample_tasks_dir
    from p2w_runtime.testing import ScriptedLlm
    from p2w_runtime.testing.sample_agent import SampleAgentScript

    url = asyncio.run(fresh(server))
    root = Path(__file__).resolve().parents[1]
    with ScriptedLlm() as llm:
        llm.handle_with(SampleAgentScript(load_tasks(sample_tasks_dir()), sample_checks()))
        args = ["--db", url, "record", "--model", "scripted-model", "--base-url", llm.base_url, "--api-key", "sk-x"]
        args += ["--limit", str(tasks), "--concurrency", "1", "--label", "bench", "--worker"]
        env = {**os.environ, "PYTHONPATH": str(root)}
        start = time.perf_counter()
        procs = [
            subprocess.Popen([sys.executable, "-c", "from p2w_rt.cli import main; main()", *args], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            for _ in range(processes)
        ]  # fmt: skip
        for proc in procs:
            _, err = proc.communicate()
            assert proc.returncode == 0, err.decode()[-2000:]
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--read-events", type=int, default=30000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--record-tasks", type=int, default=0, help="also time 1 vs 4 recording workers (Chromium)")
    args = parser.parse_args()
    n, repeat = args.events, args.repeat
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; {n} events, median of {repeat}")
    with PostgresServer() as server:
        runs = [asyncio.run(one_writer(server, n)) for _ in range(repeat)]
        one = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        base = one["raw executemany, 5 per transaction"]
        print("\n1 writer (events/s, ratio to raw executemany with the same transactions):")
        for name, seconds in one.items():
            print(f"  {name:<38} {n / seconds:>9,.0f} /s  {base / seconds:5.2f}x")
        copy_ratio = one["raw COPY, 1 transaction"] / one["store.append, 1 transaction"]
        print(f"  store, 1 transaction vs raw COPY: {copy_ratio:.2f}x")

        per = n // 4
        print(f"\n4 writer processes, {per} own + {per} shared events each, 4 events per transaction:")
        figures = {}
        for mode in ("store", "advisory", "retry"):
            samples = [four_writers(server, per, mode) for _ in range(repeat)]
            wall = statistics.median(s[0] for s in samples)
            retries = statistics.median(s[1] for s in samples)
            figures[mode] = wall
            print(
                f"  {mode:<9} {samples[0][2] / wall:>9,.0f} events/s  retries {retries:.0f}  (every position gap-free)"
            )
        print(f"  store vs raw advisory lock: {figures['advisory'] / figures['store']:.2f}x; "
              f"raw unique+retry vs raw advisory lock: {figures['advisory'] / figures['retry']:.2f}x")  # fmt: skip

        reads = [asyncio.run(read(server, args.read_events)) for _ in range(repeat)]
        store_s = statistics.median(r["store.read_all"] for r in reads)
        raw_s = statistics.median(r["raw SELECT (one fetch)"] for r in reads)
        print(f"\nread {args.read_events} events: store.read_all {store_s:.3f} s, raw SELECT {raw_s:.3f} s: ", end="")
        print(f"{store_s / raw_s:.2f}x the raw time")

        items = 400
        claims = statistics.median(workers(server, items) for _ in range(repeat))
        print(f"\nworkers: 4 processes claimed and finished {items} items in {claims:.2f} s", end="")
        print(f" ({items / claims:,.0f} items/s)")

        if args.record_tasks:
            k = args.record_tasks
            one_s, four_s = recording(server, k, 1), recording(server, k, 4)
            print(f"\nrecording {k} demo tasks: 1 worker {k / one_s:.3f} episodes/s ({one_s:.0f} s), ", end="")
            print(f"4 workers {k / four_s:.3f} episodes/s ({four_s:.0f} s): {one_s / four_s:.2f}x")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
