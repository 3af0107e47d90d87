"""Projection of real recordings: the example runs' episodes, whose events include every LLM call.

``bench_replay``'s synthetic episodes have no ``llm.call`` events; a recorded run's are most of its bytes (each
carries its whole prompt). This imports the two example run bundles (48 episodes, about 2,000 events) into a
fresh SQLite store, then times ``load_trajectories`` over every counted episode against a raw ``SELECT`` +
``json.loads`` of the same rows, best of ``--repeat``, alternated. Run it on other code with
``PYTHONPATH=OTHER_CHECKOUT`` to compare (docs/design/projection.md).

Usage: python benchmarks/bench_projection_recorded.py [--repeat 30]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import tempfile
import time
from pathlib import Path

from p2w_runtime.demo.examples import example_run_bundles
from p2w_runtime.domain import episodes_of
from p2w_runtime.domain.trajectory import load_trajectories
from p2w_runtime.store import import_bundle, open_store


def raw_select(db: Path, streams: list[str]) -> int:
    """The baseline: the episodes' events with sqlite3, each payload parsed and dropped."""
    conn = sqlite3.connect(db)
    marks = ",".join("?" * len(streams))
    rows = conn.execute(
        f"SELECT stream, seq, type, payload, hash FROM events WHERE stream IN ({marks}) ORDER BY stream, seq", streams
    ).fetchall()
    for row in rows:
        json.loads(row[3])
    conn.close()
    return len(rows)


async def bench(db: Path, repeat: int) -> None:
    async with open_store(db) as store:
        runs = [(await import_bundle(store, bundle)).run_id for bundle in example_run_bundles()]
        streams = {run_id: [ref.stream for ref in await episodes_of(store, run_id)] for run_id in runs}
        best_raw = best_load = float("inf")
        rows = episodes = 0
        for _ in range(repeat):
            started = time.perf_counter()
            rows = raw_select(db, [stream for run_id in runs for stream in streams[run_id]])
            best_raw = min(best_raw, time.perf_counter() - started)
            started = time.perf_counter()
            episodes = 0
            for run_id in runs:
                async for _trajectory in load_trajectories(store, run_id, streams=streams[run_id]):
                    episodes += 1
            best_load = min(best_load, time.perf_counter() - started)
    print(f"{episodes} recorded episodes (the counted ones), {rows} events")
    print(f"raw SELECT + json.loads (baseline):   {best_raw * 1e3:7.1f} ms")
    print(
        f"projection (load_trajectories):       {best_load * 1e3:7.1f} ms = {best_load / best_raw:.2f}x the baseline "
        f"({best_load / episodes * 1e3:.2f} ms per episode)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(bench(Path(tmp) / "examples.db", args.repeat))


if __name__ == "__main__":
    main()
