"""What carrying its dataset adds to a run: bytes stored and time to start it, against a run.started without one.

    python benchmarks/bench_dataset.py [--tasks DIR] [--history DIR] [--runs N]

For each of N runs over every task of DIR (a fresh SQLite store), it appends ``run.started`` with the dataset
carried (its blobs beside it) and, as the baseline in the same store, without; it prints the blob bytes (raw and
as stored, zstd), the blob count after each run (the same files add none), and the median time of each append
with their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import tempfile
import time
from contextlib import closing
from pathlib import Path

from p2w_runtime.data import load_tasks
from p2w_runtime.demo.sample import sample_history_dir, sample_tasks_dir
from p2w_runtime.domain import Provenance, RunSpec, carry_dataset, start_run
from p2w_runtime.store import open_store


async def bench(tasks_dir: Path, history_dir: Path | None, runs: int) -> None:
    tasks = load_tasks(tasks_dir)
    provenance = Provenance.here(tasks.dataset_id, tasks.content_hash)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        carried_s, bare_s, blob_counts = [], [], []
        async with open_store(db) as store:
            for n in range(runs):
                started = time.perf_counter()
                carried = carry_dataset(tasks, list(tasks), history_dir)
                await start_run(store, RunSpec(f"with-{n}", "bench", "m", None, provenance, carried=carried))
                carried_s.append(time.perf_counter() - started)
                blob_counts.append((await store.count())[1])
                started = time.perf_counter()
                await start_run(store, RunSpec(f"bare-{n}", "bench", "m", None, provenance))
                bare_s.append(time.perf_counter() - started)
        with closing(sqlite3.connect(db)) as conn, conn:
            (stored,) = conn.execute("SELECT sum(length(data)) FROM blobs").fetchone()
    raw = sum(len(b) for b in carried.blobs.values())
    print(f"dataset {tasks.dataset_id}: {len(carried.files.tasks)} task files, {len(carried.files.banks)} banks")
    print(f"blobs: {len(carried.blobs)}, {raw} bytes raw, {stored} stored (zstd); blobs after each run: {blob_counts}")
    with_ms, bare_ms = statistics.median(carried_s) * 1000, statistics.median(bare_s) * 1000
    print(f"run.started append: {with_ms:.1f} ms with the dataset, {bare_ms:.1f} ms without ({with_ms / bare_ms:.1f}x)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, default=sample_tasks_dir())
    parser.add_argument("--history", type=Path, default=None, help="Default: the sample banks with the sample tasks.")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    history = args.history or (sample_history_dir() if args.tasks == sample_tasks_dir() else None)
    asyncio.run(bench(args.tasks, history, args.runs))
