"""Projection of real recordings: the example runs' episodes, whose events include every LLM call.

``bench_replay``'s synthetic episodes have no ``llm.call`` events; a recorded run's are most of its bytes (each
carries its whole prompt). This imports the two example run bundles (48 episodes, about 2,000 events) into a
fresh SQLite store, then times ``load_trajectories`` over every counted episode against a raw ``SELECT`` +
``json.loads`` of the same rows, best of ``--repeat``, alternated; and the decode and fold alone, in CPU time, over
the same events already read (the part the read model's records decide; the machine is shared, and this figure
moves least with its load). Run it on other code with ``PYTHONPATH=OTHER_CHECKOUT`` to compare
(docs/design/projection.md).

``--synthetic N`` measures the same on ``N`` of ``bench_replay``'s synthetic episodes (30 steps, no LLM call) instead.

Usage: python benchmarks/bench_projection_recorded.py [--repeat 30] [--synthetic EPISODES]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sqlite3
import tempfile
import time
from pathlib import Path

from bench_replay import build

from p2w_rt.schemas import ChainedEvent
from p2w_runtime.demo.examples import example_run_bundles
from p2w_runtime.domain import episodes_of
from p2w_runtime.domain.trajectory import load_trajectories
from p2w_runtime.domain.trajectory._project import _Fold
from p2w_runtime.store import _segments, import_bundle, open_store

_segments.SEGMENT_MIN_EVENTS = 10**9
"""The baseline is plain SQL on ``events`` rows: every event stays a row here (segments: ``bench_bytes.py``)."""


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


async def bench(db: Path, repeat: int, synthetic: int | None) -> None:
    if synthetic:
        runs = [(await build(db, synthetic, 30))[0]]
    async with open_store(db) as store:
        if not synthetic:
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
        events = [e async for e in store.read_chained([s for run_id in runs for s in streams[run_id]])]
    fold_cpu = fold_alone(events, repeat)
    print(f"{episodes} {'synthetic' if synthetic else 'recorded'} episodes (the counted ones), {rows} events")
    print(f"raw SELECT + json.loads (baseline):   {best_raw * 1e3:7.1f} ms")
    print(
        f"projection (load_trajectories):       {best_load * 1e3:7.1f} ms = {best_load / best_raw:.2f}x the baseline "
        f"({best_load / episodes * 1e3:.2f} ms per episode)"
    )
    print(f"decode and fold alone (CPU, read):    {fold_cpu * 1e6 / len(events):7.2f} us per event")


def fold_alone(events: list[ChainedEvent], repeat: int) -> float:
    """Best CPU seconds to fold ``events`` (already read) into trajectories, the collector off."""
    best = float("inf")
    gc.disable()
    try:
        for _ in range(repeat):
            started = time.process_time()
            folds: dict[str, _Fold] = {}
            for event in events:
                fold = folds.get(event.stream)
                if fold is None:
                    fold = folds[event.stream] = _Fold()
                fold.apply_stored(event)
            best = min(best, time.process_time() - started)
            del folds
    finally:
        gc.enable()
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--synthetic", type=int, metavar="EPISODES")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(bench(Path(tmp) / "episodes.db", args.repeat, args.synthetic))


if __name__ == "__main__":
    main()
