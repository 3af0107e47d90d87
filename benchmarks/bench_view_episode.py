"""Episode page benchmark: a page of a 200,000-step episode against the page of a 30-step one (issue 28).

Both episodes are built the same way in one store: per step an observation, a planner LLM call (a 1.6 KB system
prompt, usage and latency), the planner's reasoning and an action; a history access with hits every 50 steps;
final state and end. The viewer runs as it does for a user (uvicorn on 127.0.0.1, the store opened once); each
page is fetched over HTTP, warm (after one fetch), median of ``--repeat``. Printed: wall and CPU time and HTML size
of the 30-step page, of the long episode's first, middle and last page and of a ``?step=N`` permalink (redirect
and page), each with its ratio to the 30-step page; a 100-step episode (one full page, read whole) is the
like-for-like baseline of a page of 100 steps. Before paging, the 200,000-step page took 53 s and 128 MB.

Usage: python benchmarks/bench_view_episode.py [--steps 200000] [--repeat 5] [--db FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import uvicorn

from p2w_cli.view.app import create_app
from p2w_rt.schemas import GroundTruth, LlmCall, LlmUsage, MemoryEntry
from p2w_runtime.store import open_store
from p2w_runtime.testing.episodes import EpisodeBuilder, run_finished, run_started

PROMPT = "You are a web agent acting for a user. " * 40
SHORT_STEPS = 30
FULL_PAGE = 100
"""A one-page episode as long as a page: the like-for-like baseline of a long episode's page."""
CHUNK = 1000
"""Steps appended per transaction while building (a recorder appends one step at a time)."""


async def build(db: Path, label: str, steps: int) -> None:
    truth = GroundTruth(website="shop.example", websites=["shop.example"], preferences=["size 10"])
    run_id = f"01bench-{label}"
    b = EpisodeBuilder(run_id, "Bench_Persona_A1", query="buy my usual shoes", ground_truth=truth, level=1)
    async with open_store(db) as store:
        await store.append([run_started(run_id, label)])
        for step in range(1, steps + 1):
            b.observation(step, f"https://shop.example/p/{step}", title=f"Results {step}", description="A results page")
            b.writer.add(
                LlmCall(
                    role="planner",
                    model="gpt-4o-mini",
                    step=step,
                    messages=[{"role": "system", "content": PROMPT}, {"role": "user", "content": f"page {step}"}],
                    response=f"click [{step}]",
                    usage=LlmUsage(prompt_tokens=600, completion_tokens=20, total_tokens=620),
                    latency_s=0.8,
                    fingerprint=f"{step:064x}",
                    ordinal=0,
                )
            )
            b.planner(step, f"Step {step}: I narrow the results with the user's size before choosing an item.")
            if step % 50 == 0:
                q = b.history_query(f"what size does the user wear ({step})", step=step)
                entries = [
                    MemoryEntry(
                        timestamp="2024-01-01", type="purchase", object=f"shoes size 10 ({i})", website="shop.example"
                    )
                    for i in range(5)
                ]
                b.retrieval(q, f"what size does the user wear ({step})", entries, step=step)
            b.action(step, "click", str(step))
            if step % CHUNK == 0:
                await store.append(*b.writer.take())
        b.action(steps, "stop", "found them")
        b.final_state("https://shop.example/done", None, title="done")
        b.finish("answered", "found them", final_url="https://shop.example/done", steps=steps)
        await store.append(*b.writer.take())
        await store.append([run_finished(run_id, 1)])


def fetch(url: str) -> tuple[float, float, int, str]:
    """(wall seconds, CPU seconds of this process, which serves the page in a thread, bytes, final URL)."""
    started, cpu = time.perf_counter(), time.process_time()
    with urllib.request.urlopen(url, timeout=600) as response:
        size = len(response.read())
        final = response.geturl()
    return time.perf_counter() - started, time.process_time() - cpu, size, final


def serve(db: Path) -> str:
    server = uvicorn.Server(uvicorn.Config(create_app(db), host="127.0.0.1", port=0, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"


def measure(url: str, repeat: int) -> tuple[float, float, int, str]:
    fetch(url)  # warm: the run's listing and reads are cached until the log moves, templates compiled
    runs = [fetch(url) for _ in range(repeat)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs), runs[0][2], runs[0][3]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--db", type=Path, help="Keep the store here and reuse it on the next run.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or Path(tmp) / "bench.db"
        if not db.exists():
            started = time.perf_counter()
            asyncio.run(build(db, "short", SHORT_STEPS))
            asyncio.run(build(db, "hundred", FULL_PAGE))
            asyncio.run(build(db, "long", args.steps))
            print(
                f"built {SHORT_STEPS}-, {FULL_PAGE}- and {args.steps}-step episodes "
                f"in {time.perf_counter() - started:.0f}s"
            )
        print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
        base = serve(db)
        episode = "episode/Bench_Persona_A1"
        middle = args.steps // 2 + 1
        pages = [
            (f"{SHORT_STEPS}-step episode (one page)", f"{base}/run/short/{episode}"),
            (f"{FULL_PAGE}-step episode (one full page)", f"{base}/run/hundred/{episode}"),
            (f"{args.steps}-step episode, page 1", f"{base}/run/long/{episode}"),
            (f"{args.steps}-step episode, middle page", f"{base}/run/long/{episode}?page={(middle - 1) // 100 + 1}"),
            (f"{args.steps}-step episode, last page", f"{base}/run/long/{episode}?page={(args.steps - 1) // 100 + 1}"),
            (f"?step={middle} (redirect + page)", f"{base}/run/long/{episode}?step={middle}"),
        ]
        rows = [(name, *measure(url, args.repeat)) for name, url in pages]
        short = rows[0]
        print(f"{'page':44} {'wall':>9} {'CPU':>9} {'HTML':>10} {'wall ratio':>10} {'size ratio':>10}")
        for name, wall, cpu, size, _ in rows:
            print(
                f"{name:44} {wall * 1000:7.0f}ms {cpu * 1000:7.0f}ms {size / 1024:8.0f}KB "
                f"{wall / short[1]:9.2f}x {size / short[3]:9.2f}x"
            )


if __name__ == "__main__":
    main()
