"""Replay benchmark: rules-judge throughput, a cached second pass, and projection against a raw SELECT.

1,000 synthetic episodes of 30 steps (about 100 events each: an observation, the planner's
reasoning and an action per step, three history accesses with 5 hits and a memory answer,
a final state and the end) are appended to a fresh SQLite store, then:

- raw SELECT: the same events fetched with sqlite3 (and, second baseline, their JSON parsed);
- projection: ``load_trajectories`` (read, upcast + validate each event, fold) for the whole run;
- rules judge: ``rubric-rules`` scoring the projected trajectories in memory (cold matcher caches);
- replay, first pass: ``replay_run`` end to end (load, judge, append the judgments);
- replay, second pass: the same call again, all cached (stream heads only, no event read).

Usage: python benchmarks/bench_replay.py [--episodes 1000] [--steps 30]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import random
import sqlite3
import tempfile
import time
from pathlib import Path

from p2w_runtime.store import open_store
from replay.judges import JudgeSettings, make_judge
from replay.judging import replay_run
from replay.matching import compile_value, normalize, tokenize_normalized
from replay.synthetic import EpisodeBuilder, run_finished, run_started
from replay.trajectory import load_trajectories, project
from schemas import GroundTruth, Location, MemoryEntry, uuid7

SITES = ["kohls.com", "amazon.com", "resy.com", "seatgeek.com", "coursera.org", "instacart.com"]
PREFS = [
    ["32x32", "visible ratings 4.2+ stars with 50+ reviews"],
    ["Women's M", "$70"],
    ["Intermediate or Advanced", "rating ≥4.6 and ≥1,000 reviews"],
    ["Hip-hop/R&B", "lower-bowl seats near the stage"],
]


def episode(run_id: str, i: int, steps: int, rng: random.Random) -> EpisodeBuilder:
    site, prefs = SITES[i % len(SITES)], PREFS[i % len(PREFS)]
    truth = GroundTruth(
        website=site,
        websites=[site],
        preferences=prefs,
        location=Location(city="Los Angeles", state="CA", zip="90210", raw="Los Angeles, CA 90210"),
    )
    b = EpisodeBuilder(
        run_id,
        f"Persona{i:04d}_Last_A{1 + i % 3}",
        query=f"Find the usual item #{i} for me",
        ground_truth=truth,
        level=2 - i % 3,
    )
    for access in range(3):
        query = f"what does the user prefer for item {i} ({access})"
        q = b.history_query(query, step=access + 1, reason=f"the task leaves the {access}th detail open")
        entries = [
            MemoryEntry(
                timestamp=f"2024-0{h + 1}-1{access}",
                type="purchase",
                object=f"bought item {i}-{h} {prefs[h % 2] if rng.random() < 0.5 else 'plain'}",
                website=site if h == 0 else "example.com",
            )
            for h in range(5)
        ]
        r = b.retrieval(q, query, entries, step=access + 1)
        b.memory_answer(r, f"From the history (episode {i}): the user prefers {prefs[access % 2]} on {site}.")
    for step in range(1, steps + 1):
        url = f"https://www.{site}/search?q=item-{i}-{step}&page={step}"
        b.observation(step, url, title=f"Results {i}/{step}", description=f"A results page listing {20 + step} items")
        b.planner(
            step,
            f"Step {step} of episode {i}: I look at the results and narrow them with the filter "
            f"{prefs[step % 2] if rng.random() < 0.3 else 'best match'} before choosing an item.",
        )
        if step % 3 == 0:
            b.action(step, "type", str(10 + step), f"item {i} {prefs[0] if step == 3 else 'size'}", "1")
        else:
            b.action(step, "click", str(100 + step))
    b.action(steps, "stop", f"Item {i}: found it at {site}")
    b.final_state(f"https://www.{site}/item/{i}", None)
    b.finish("answered", f"Item {i}: found it at {site}", steps=steps)
    return b


async def build(db: Path, episodes: int, steps: int) -> tuple[str, int]:
    rng = random.Random(7)
    run_id = uuid7()
    total = 0
    async with open_store(db) as store:
        await store.append([run_started(run_id, "bench")])
        for i in range(episodes):
            b = episode(run_id, i, steps, rng)
            await store.append(b.events, b.blobs)
            total += len(b.events)
        await store.append([run_finished(run_id, episodes)])
    return run_id, total


def raw_select(db: Path, run_id: str, parse: bool) -> tuple[float, int]:
    started = time.perf_counter()
    conn = sqlite3.connect(db)
    rows = conn.execute(
        "SELECT stream, seq, type, payload, hash FROM events WHERE stream LIKE ? ORDER BY stream, seq", (f"{run_id}/%",)
    ).fetchall()
    if parse:
        for row in rows:
            json.loads(row[3])
    conn.close()
    return time.perf_counter() - started, len(rows)


async def measure(db: Path, run_id: str) -> dict[str, float]:
    figures: dict[str, float] = {}
    async with open_store(db) as store:
        started = time.perf_counter()
        trajectories = [t async for t in load_trajectories(store, run_id)]
        figures["projection_s"] = time.perf_counter() - started

        # where projection time goes: the store's read path, decoding (upcast + validation), the fold itself
        streams = [t.stream for t in trajectories]
        started = time.perf_counter()
        stored = [[e async for e in store.read_stream(stream)] for stream in streams]
        figures["read_s"] = time.perf_counter() - started
        started = time.perf_counter()
        decoded = [[e.decode() for e in events] for events in stored]
        figures["decode_s"] = time.perf_counter() - started
        started = time.perf_counter()
        for events in decoded:
            project(events)
        figures["fold_s"] = time.perf_counter() - started
        del stored, decoded

        judge = make_judge("rubric-rules", JudgeSettings())
        for cache in (tokenize_normalized, compile_value, normalize):
            cache.cache_clear()
        gc.freeze()  # the 1,000 preloaded trajectories are fixture data: keep the collector from rescanning them
        started, cpu = time.perf_counter(), time.process_time()
        verdicts = [judge.score(t) for t in trajectories]  # type: ignore[attr-defined]
        figures["judge_s"] = time.perf_counter() - started
        figures["judge_cpu_s"] = time.process_time() - cpu
        gc.unfreeze()
        del trajectories
        figures["mean_p_avg"] = sum(v.metrics["p_avg"] for v in verdicts) / len(verdicts)
        episodes = len(verdicts)

        started = time.perf_counter()
        first = await replay_run(store, run_id, [judge])
        figures["first_pass_s"] = time.perf_counter() - started
        started = time.perf_counter()
        second = await replay_run(store, run_id, [judge])
        figures["second_pass_s"] = time.perf_counter() - started
        assert first.judged == episodes and second.cached == episodes, (first, second)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        started = time.perf_counter()
        run_id, events = asyncio.run(build(db, args.episodes, args.steps))
        built_s = time.perf_counter() - started
        print(f"built {args.episodes} episodes x {args.steps} steps = {events} events in {built_s:.1f}s")
        select_s, rows = raw_select(db, run_id, parse=False)
        select_json_s, _ = raw_select(db, run_id, parse=True)
        assert rows == events
        f = asyncio.run(measure(db, run_id))
    n = args.episodes
    print(f"raw SELECT of the {rows} events:         {select_s:8.3f} s")
    print(f"raw SELECT + json.loads:                {select_json_s:8.3f} s")
    print(
        f"projection (load_trajectories):         {f['projection_s']:8.3f} s  "
        f"= {f['projection_s'] / select_s:.1f}x raw SELECT, {f['projection_s'] / select_json_s:.1f}x SELECT+json"
    )
    print(
        f"  of which store read_stream {f['read_s']:.3f} s, decode {f['decode_s']:.3f} s, fold {f['fold_s']:.3f} s "
        f"(measured separately)"
    )
    print(
        f"rubric-rules on projected trajectories: {f['judge_s']:8.3f} s  = {n / f['judge_s']:,.0f} episodes/s "
        f"wall, {n / f['judge_cpu_s']:,.0f}/s CPU (target >= 1,000; mean P_avg {f['mean_p_avg']:.3f})"
    )
    print(
        f"replay, first pass (load+judge+append): {f['first_pass_s']:8.3f} s  = {n / f['first_pass_s']:,.0f} episodes/s"
    )
    print(
        f"replay, second pass (all cached):       {f['second_pass_s']:8.3f} s  "
        f"= {f['first_pass_s'] / f['second_pass_s']:.0f}x faster than the first pass"
    )


if __name__ == "__main__":
    main()
