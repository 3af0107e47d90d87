"""Store throughput against plain sqlite3, in the same run (issue 2, "Benchmark").

Appends N realistic events (about 1 KB of JSON each, a distinct 50 KB page dump every 5 events)
through the store, once in per-step batches and once as one batch, then inserts the very same rows
(the store's event rows, the blobs as the writer gave them) with ``sqlite3.executemany`` in one
transaction. A stricter second baseline inserts the blobs already compressed, so raw gets for free the
zstd work the store does. Then streams R events back out with ``read_all`` against a raw ``SELECT``.
Targets: append >= 0.5x raw speed, read <= 2x raw time. Each figure is the median of ``--repeat`` runs.

Every figure is given as wall time and as process CPU time (all threads): on a shared machine the
wall clock mostly measures the neighbours, the CPU time what the store itself costs.

    python benchmarks/bench_store.py [--events 20000] [--read-events 30000] [--repeat 3] [--read-repeat 7]
        [--profile append|batch|read]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import os
import pstats
import random
import sqlite3
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import zstandard

from p2w_rt.schemas import Action, HistoryQuery, NewEvent, Observation, ParsedAction, Rationale, blob_hash
from p2w_runtime.store import EventStore, _segments, connect_store

_segments.SEGMENT_MIN_EVENTS = 10**9
"""The baseline is plain SQL on ``events`` rows: every event stays a row here (segments: ``bench_bytes.py``)."""

WORDS = [
    "link",
    "button",
    "textbox",
    "heading",
    "combobox",
    "option",
    "listitem",
    "navigation",
    "main",
    "search",
    "results",
    "price",
    "rating",
    "review",
    "vegan",
    "gluten",
    "free",
    "delivery",
    "hotel",
    "flight",
    "seat",
    "window",
    "aisle",
    "checkout",
    "cart",
    "account",
    "history",
]
STEP_EVENTS = 5
Step = tuple[list[NewEvent], dict[str, bytes]]


@dataclass
class Timing:
    wall: float = 0.0
    cpu: float = 0.0


@contextmanager
def measure(profile: bool = False) -> Iterator[Timing]:
    timing = Timing()
    profiler = cProfile.Profile() if profile else None
    wall, cpu = time.perf_counter(), time.process_time()
    if profiler:
        profiler.enable()
    yield timing
    if profiler:
        profiler.disable()
    timing.wall, timing.cpu = time.perf_counter() - wall, time.process_time() - cpu
    if profiler:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)


# -- workload -------------------------------------------------------------------------------------
def words(rng: random.Random, n_chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < n_chars:
        word = rng.choice(WORDS)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)[:n_chars]


def page_dump(rng: random.Random, n_bytes: int, lines: list[str]) -> bytes:
    """An AX-tree-like text: about as compressible as a real one, different on every page."""
    out: list[str] = []
    size = 0
    while size < n_bytes:
        line = f"[{rng.randrange(10**6)}] {rng.choice(lines)}"
        out.append(line)
        size += len(line) + 1
    return "\n".join(out).encode()[:n_bytes]


def make_workload(n_events: int, *, payload_chars: int, blob_bytes: int, seed: int = 7) -> list[Step]:
    """Steps of five events (observation + page blob, history query, two rationales, action), 50 steps an episode."""
    rng = random.Random(seed)
    lines = [f"{rng.choice(WORDS)} '{words(rng, rng.randrange(10, 60))}' depth={i % 9}" for i in range(5000)]
    steps: list[Step] = []
    for step_no in range(n_events // STEP_EVENTS):
        stream = f"bench-run/ep{step_no // 50:05d}"
        step = step_no % 50
        blob = page_dump(rng, blob_bytes, lines)
        sha = blob_hash(blob)
        url = f"http://127.0.0.1:8000/shop/{rng.randrange(10**6)}"
        text = words(rng, payload_chars - 120)
        query = NewEvent(stream=stream, payload=HistoryQuery(step=step, phase="on-demand", query=text, reason="brand"))
        description = words(rng, payload_chars - 200)
        generated = Rationale(
            step=step, source="generator", text=words(rng, payload_chars - 90), cited_entry_ids=[1, 4]
        )
        raw_action = f"click [{step}] " + words(rng, payload_chars - 160)
        action = Action(
            step=step, raw=raw_action, parsed=ParsedAction(name="click", args=[str(step)]), status="executed"
        )
        events = [
            NewEvent(stream=stream, payload=Observation(step=step, url=url, description=description, ax_tree=sha)),
            query,
            NewEvent(stream=stream, causation_id=query.event_id, payload=generated),
            NewEvent(
                stream=stream, payload=Rationale(step=step, source="planner", text=words(rng, payload_chars - 90))
            ),
            NewEvent(stream=stream, payload=action),
        ]
        steps.append((events, {sha: blob}))
    return steps


# -- the store ------------------------------------------------------------------------------------
async def append_per_step(store: EventStore, steps: list[Step]) -> None:
    for events, blobs in steps:
        await store.append(events, blobs)


async def append_one_batch(store: EventStore, steps: list[Step]) -> None:
    await store.append(
        [e for events, _ in steps for e in events], {k: v for _, blobs in steps for k, v in blobs.items()}
    )


async def timed_append(path: Path, run: Callable[[EventStore], Awaitable[None]], profile: bool) -> Timing:
    store = await connect_store(path)
    try:
        with measure(profile) as timing:
            await run(store)
        return timing
    finally:
        await store.close()


async def timed_read(path: Path, profile: bool) -> tuple[Timing, int]:
    store = await connect_store(path, create=False)
    count = 0
    try:
        with measure(profile) as timing:
            async for _ in store.read_all():
                count += 1
        return timing, count
    finally:
        await store.close()


# -- plain sqlite3 --------------------------------------------------------------------------------
def raw_rows(path: Path) -> tuple[list[tuple], list[tuple]]:
    """The exact rows the store wrote, to replay them through plain sqlite3."""
    with closing(sqlite3.connect(path)) as conn, conn:
        events = conn.execute("SELECT * FROM events ORDER BY position").fetchall()
        blobs = conn.execute("SELECT * FROM blobs ORDER BY rowid").fetchall()
    return events, blobs


def raw_insert(path: Path, events: list[tuple], blobs: list[tuple], *, per_transaction: int | None = None) -> Timing:
    """Plain sqlite3 into the same tables: one transaction, or one per ``per_transaction`` events (+ their blob)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    insert_blob = f"INSERT INTO blobs VALUES ({','.join('?' * len(blobs[0]))})"
    insert_event = f"INSERT INTO events VALUES ({','.join('?' * len(events[0]))})"
    size = per_transaction or len(events)
    per_blob = max(1, len(events) // len(blobs))
    with measure() as timing:
        for i in range(0, len(events), size):
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(insert_blob, blobs[i // per_blob : (i + size) // per_blob])
            conn.executemany(insert_event, events[i : i + size])
            conn.execute("COMMIT")
    conn.close()
    return timing


def raw_select(path: Path, *, decode: bool) -> tuple[Timing, int]:
    conn = sqlite3.connect(path)
    n = 0
    with measure() as timing:
        for row in conn.execute("SELECT * FROM events ORDER BY position"):
            if decode:
                json.loads(row[8])
                json.loads(row[9])
            n += 1
    conn.close()
    return timing, n


# -- report ---------------------------------------------------------------------------------------
def line(name: str, n: int, t: Timing, base: Timing | None = None, note: str = "") -> None:
    speed = f"{n / t.wall:>9,.0f} ev/s {t.wall:7.3f} s wall {t.cpu:7.3f} s cpu"
    ratio = f"  speed vs raw: {base.wall / t.wall:4.2f}x wall {base.cpu / t.cpu:4.2f}x cpu" if base else ""
    print(f"  {name:<52} {speed}{ratio} {note}")


def fresh(directory: Path, name: str) -> Path:
    path = directory / name
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return path


def median(timings: list[Timing]) -> Timing:
    """The run with the median wall time (its CPU time with it): one slow neighbour does not decide a figure."""
    return sorted(timings, key=lambda t: t.wall)[len(timings) // 2]


async def main(args: argparse.Namespace) -> None:
    tmp = Path(args.dir or tempfile.mkdtemp(prefix="bench_store_"))
    tmp.mkdir(parents=True, exist_ok=True)
    built = time.perf_counter()
    steps = make_workload(args.events, payload_chars=args.payload_bytes, blob_bytes=args.blob_kb * 1024)
    n = len(steps) * STEP_EVENTS
    # The workload's own objects are not the store's to scan: without this, every GC pass the store's
    # allocations trigger walks the 20,000 prepared events too (2.5x the store's CPU in our runs).
    gc.freeze()
    payload = len(steps[0][0][2].payload.model_dump_json())
    print(
        f"{n} events in {len(steps)} steps of {STEP_EVENTS}, {len(steps)} blobs of {args.blob_kb} KB, payloads "
        f"~{payload} B (built in {time.perf_counter() - built:.1f} s); {os.cpu_count()} CPUs, "
        f"load {os.getloadavg()[0]:.1f}; median of {args.repeat} runs each ({args.read_repeat} for reads); "
        f"databases in {tmp}"
    )
    print(f"append {n} events")
    profile = args.profile
    per_step = median(
        [
            await timed_append(fresh(tmp, "per_step.db"), partial(append_per_step, steps=steps), profile == "append")
            for _ in range(args.repeat)
        ]
    )
    batch = median(
        [
            await timed_append(fresh(tmp, "one_batch.db"), partial(append_one_batch, steps=steps), profile == "batch")
            for _ in range(args.repeat)
        ]
    )
    event_rows, blob_rows = raw_rows(tmp / "per_step.db")
    decompress = zstandard.ZstdDecompressor().decompress
    as_given = [(sha, size, "none", decompress(data)) for sha, size, _, data in blob_rows]

    async def raw_runs(rows: list[tuple], blobs: list[tuple], per_transaction: int | None = None) -> Timing:
        runs = []
        for _ in range(args.repeat):
            path = fresh(tmp, "raw.db")
            await (await connect_store(path)).close()  # the store's tables, indexes and triggers
            runs.append(raw_insert(path, rows, blobs, per_transaction=per_transaction))
        return median(runs)

    raw = await raw_runs(event_rows, as_given)
    raw_compressed = await raw_runs(event_rows, blob_rows)
    raw_step = await raw_runs(event_rows, as_given, STEP_EVENTS)
    line("raw executemany, 1 transaction", n, raw)
    line("raw executemany, 1 transaction, blobs pre-compressed", n, raw_compressed)
    line(f"raw executemany, {STEP_EVENTS} events per transaction", n, raw_step)
    line("store.append, 1 transaction", n, batch, raw, "(target >= 0.5x)")
    line("  the same, against raw given compressed blobs", n, batch, raw_compressed)
    line(f"store.append, {STEP_EVENTS} events per transaction", n, per_step, raw_step, "(vs raw per step)")

    del steps, event_rows, blob_rows, as_given  # the appends' inputs are not the readers' to carry
    gc.unfreeze()
    gc.collect()
    read_path = tmp / "one_batch.db"
    if args.read_events > n:
        read_path = fresh(tmp, "read.db")
        store = await connect_store(read_path)
        extra = make_workload(args.read_events, payload_chars=args.payload_bytes, blob_bytes=1024, seed=11)
        for i in range(0, len(extra), 200):
            await append_one_batch(store, extra[i : i + 200])
        await store.close()
    plain_runs, decoded_runs, store_runs = [], [], []
    for _ in range(args.read_repeat):  # interleaved, so that a busy moment hits all three alike
        plain_runs.append(raw_select(read_path, decode=False))
        decoded_runs.append(raw_select(read_path, decode=True))
        store_runs.append(await timed_read(read_path, profile == "read"))
    count = plain_runs[0][1]
    assert all(c == count for _, c in [*decoded_runs, *store_runs]), "every reader must see every event"
    raw_plain_read = median([t for t, _ in plain_runs])
    raw_decoded = median([t for t, _ in decoded_runs])
    via_store = median([t for t, _ in store_runs])
    print(f"read {count} events back")
    line("raw SELECT", count, raw_plain_read)
    line("raw SELECT + json.loads of each row", count, raw_decoded)
    line("store.read_all", count, via_store)
    print(
        f"  store.read_all takes {via_store.wall / raw_plain_read.wall:.2f}x the raw SELECT's wall time "
        f"({via_store.cpu / raw_plain_read.cpu:.2f}x cpu; target <= 2x), "
        f"{via_store.wall / raw_decoded.wall:.2f}x that of SELECT + json.loads "
        f"({via_store.cpu / raw_decoded.cpu:.2f}x cpu)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--read-events", type=int, default=30_000)
    parser.add_argument("--payload-bytes", type=int, default=1000)
    parser.add_argument("--blob-kb", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each measurement; the median is reported")
    parser.add_argument(
        "--read-repeat", type=int, default=7, help="runs of each read (a read takes ~0.2 s and varies by ~30%%)"
    )
    parser.add_argument("--dir", help="where to put the databases (default: a new temp dir)")
    parser.add_argument("--profile", choices=["append", "batch", "read"], help="cProfile one of the store's runs")
    asyncio.run(main(parser.parse_args()))
