"""Viewer benchmark: how long the pages of a 1,000-episode run take to render, against a raw SELECT of what they show.

The run is bench_replay's synthetic one (1,000 episodes of 30 steps: observation, planner reasoning, action per
step, three history accesses with hits and answers, final state), with a screenshot and an accessibility tree blob
on every observation and one planner LLM call per step, judged with ``rubric-rules`` and classified with the
``rules`` classifier, so every page has all it can show. The viewer runs as it does for a user (uvicorn on
127.0.0.1, the store opened once) and each page is fetched over HTTP, median of ``--repeat`` fetches:

- runs page; run page 1 of 10 (100 episodes); run page filtered by error label; the last run page; the run page
  sorted by P_avg, failures first, by tokens; the usage chart; two searches across runs;
- an episode page (30 steps: 30 screenshots linked, 30 LLM calls, judgments and labels);
- baselines: a raw sqlite3 SELECT (+ json.loads) of the events each page is made from.

Usage: python benchmarks/bench_view.py [--episodes 1000] [--steps 30] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sqlite3
import statistics
import tempfile
import threading
import time
import urllib.request
from contextlib import closing
from pathlib import Path

import uvicorn
from bench_replay import episode

from p2w_cli.view.app import create_app
from p2w_rt.replay.classify import CLASSIFIERS, RulesClassifier
from p2w_rt.replay.derived import PassSettings, run_pass
from p2w_rt.replay.judges import JUDGES, make_judge
from p2w_rt.schemas import LlmCall, LlmUsage, NewEvent, Observation, blob_hash, uuid7
from p2w_runtime.store import _segments, open_store
from p2w_runtime.testing.episodes import run_finished, run_started

_segments.SEGMENT_MIN_EVENTS = 10**9
"""The baseline is plain SQL on ``events`` rows: every event stays a row here (segments: ``bench_bytes.py``)."""

PROMPT = "You are a web agent acting for a user. " * 40


def screenshot(i: int) -> bytes:
    """A distinct small PNG-looking blob per page (the viewer only links it; its bytes are not decoded here)."""
    return b"\x89PNG\r\n\x1a\n" + f"synthetic screenshot {i}".encode() * 200


async def build(db: Path, episodes: int, steps: int, label: str = "bench-view") -> tuple[str, str, int]:
    rng = random.Random(7)
    run_id = uuid7()
    total = 0
    async with open_store(db) as store:
        await store.append([run_started(run_id, label)])
        for i in range(episodes):
            b = episode(run_id, i, steps, rng)
            events: list[NewEvent] = []
            for event in b.events:
                payload = event.payload
                if isinstance(payload, Observation):
                    shot, ax = screenshot(i * 100 + payload.step), f"[1] RootWebArea '{payload.title}'\n".encode() * 60
                    b.blobs[blob_hash(shot)], b.blobs[blob_hash(ax)] = shot, ax
                    event = event.model_copy(
                        update={
                            "payload": payload.model_copy(
                                update={"screenshot": blob_hash(shot), "ax_tree": blob_hash(ax)}
                            )
                        }
                    )
                    call = LlmCall(
                        role="planner",
                        model="bench-model",
                        step=payload.step,
                        messages=[{"role": "system", "content": PROMPT}, {"role": "user", "content": payload.title}],
                        response=f"click [{100 + payload.step}]",
                        usage=LlmUsage(prompt_tokens=600, completion_tokens=20, total_tokens=620),
                        latency_s=0.8,
                        fingerprint=f"{i:032x}{payload.step:032x}",
                        ordinal=0,
                        cost_usd=0.0004,
                    )
                    events += [event, NewEvent(stream=b.stream, payload=call)]
                    continue
                events.append(event)
            await store.append(events, b.blobs)
            total += len(events)
        await store.append([run_finished(run_id, episodes)])
        await run_pass(JUDGES, store, run_id, [make_judge("rubric-rules", PassSettings())])
        await run_pass(CLASSIFIERS, store, run_id, [RulesClassifier()])
        middle = f"{run_id}/{episode(run_id, episodes // 2, steps, random.Random(7)).stream.split('/', 1)[1]}"
    return run_id, middle, total


def raw_select(db: Path, sql: str, params: tuple[object, ...]) -> float:
    started = time.perf_counter()
    with closing(sqlite3.connect(db)) as conn, conn:
        for row in conn.execute(sql, params):
            json.loads(row[0])
    return time.perf_counter() - started


def fetch(url: str) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of this process, which serves the page in a thread, bytes)."""
    started, cpu = time.perf_counter(), time.process_time()
    with urllib.request.urlopen(url, timeout=120) as response:
        size = len(response.read())
    return time.perf_counter() - started, time.process_time() - cpu, size


def serve(db: Path) -> tuple[str, uvicorn.Server]:
    server = uvicorn.Server(uvicorn.Config(create_app(db), host="127.0.0.1", port=0, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    return f"http://127.0.0.1:{port}", server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--db", type=Path, help="Keep the synthetic store here and reuse it on the next run.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or Path(tmp) / "bench.db"
        ids = db.with_name(db.name + ".ids")
        if ids.exists():
            run_id, stream = ids.read_text().split()
        else:
            started = time.perf_counter()
            run_id, stream, events = asyncio.run(build(db, args.episodes, args.steps))
            ids.write_text(f"{run_id}\n{stream}\n")
            print(
                f"built {args.episodes} episodes x {args.steps} steps = {events} events, judged and classified, "
                f"in {time.perf_counter() - started:.1f}s"
            )
        print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
        base, server = serve(db)
        last = -(-args.episodes // 100)
        pages = {
            "runs page": "/",
            "run page 1 (100 episodes)": f"/run/{run_id}",
            "run page, label filter": f"/run/{run_id}?label=history_retrieval_failure",
            f"run page {last} (last)": f"/run/{run_id}?page={last}",
            "run page sorted by P_avg": f"/run/{run_id}?sort=p_avg",
            "run page, failures first": f"/run/{run_id}?sort=failures",
            "run page sorted by tokens": f"/run/{run_id}?sort=tokens&order=desc",
            "usage chart (PNG)": f"/run/{run_id}/plot/usage.png",
            "search, a task id": f"/search?q={stream.split('/', 1)[1]}",
            "search, a word of every query": "/search?q=find",
            f"episode page ({args.steps} steps)": f"/run/{run_id}/episode/{stream.split('/', 1)[1]}",
            "api: runs": "/api/runs",
            "api: run page 1": f"/api/run/{run_id}",
            "api: run usage": f"/api/run/{run_id}/usage",
            "api: live state": f"/api/run/{run_id}/live",
            f"api: episode ({args.steps} steps)": f"/api/run/{run_id}/episode/{stream.split('/', 1)[1]}",
        }
        cold = fetch(base + f"/run/{run_id}")
        print(
            f"first open of the run page (cold: store read, templates compiled): {cold[0] * 1000:.0f} ms wall, "
            f"{cold[1] * 1000:.0f} ms CPU"
        )
        baselines = {
            "run": raw_select(
                db,
                "SELECT payload FROM events WHERE stream LIKE ? AND type IN "
                "('episode.started', 'episode.finished', 'judgment', 'error.classified')",
                (f"{run_id}/%",),
            ),
            "episode": raw_select(db, "SELECT payload FROM events WHERE stream = ? ORDER BY seq", (stream,)),
        }
        print(f"{'page (warm)':34} {'median':>8} {'CPU':>8} {'max':>8} {'bytes':>9}  vs raw SELECT+json of its events")
        for name, path in pages.items():
            times, cpus, size = [], [], 0
            for _ in range(args.repeat):
                elapsed, cpu, size = fetch(base + path)
                times.append(elapsed)
                cpus.append(cpu)
            median = statistics.median(times)
            kind = "episode" if "episode" in name else "run" if "run page" in name else None
            ratio = f"{median / baselines[kind]:6.1f}x ({baselines[kind] * 1000:.0f} ms)" if kind else ""
            verdict = "ok" if median < 1.0 else "SLOW (target < 1 s)"
            print(
                f"{name:34} {median * 1000:6.0f}ms {statistics.median(cpus) * 1000:6.0f}ms {max(times) * 1000:6.0f}ms "
                f"{size:9,}  {ratio}  {verdict}"
            )
        server.should_exit = True


if __name__ == "__main__":
    main()
