"""Scale: what each operation costs at 100 / 1,000 / 10,000 episodes, and whether it grows with its work.

Each size is one run of bench_replay's synthetic episodes (``--steps`` steps each, three history accesses with hits,
a final state), appended one episode per transaction, then judged once with ``rubric-rules``. For each size:

- append: seconds to append the run (per episode), and the file's bytes (per episode);
- first replay: ``run_pass`` of ``rubric-rules`` over the run (every episode projected and judged);
- ``p2w-rt metrics RUN``, ``p2w-rt show RUN`` (subprocesses, as a user runs them; start-up included), CPU
  seconds, best of ``--repeat``;
- the viewer's run page (100 rows), warm, CPU seconds of the serving process, median of ``--repeat`` x 10 fetches
  over HTTP (uvicorn on 127.0.0.1).

Append and first replay are wall seconds of the build (kept with the stores).

Growth: each figure's ratio between sizes against the ratio of episodes. "linear" when 10x the episodes costs at
most ~12x (per-episode work constant), "bounded" when it grows far less (the page shows 100 rows whatever the run
size), "SUPERLINEAR" otherwise. The commands' figures are taken less the start-up of ``p2w-rt runs`` on an empty
store (measured in the same run), which no run size changes. Then the crowded store: the 10,000-episode run
beside ``--others`` runs of 1,000 episodes, and ``show RUN`` and the warm run page there against the run alone
(target: within 1.2x).

Usage: python benchmarks/bench_scale.py [--sizes 100,1000,10000] [--dir DIR (stores kept and reused)]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import uvicorn
from bench_replay import episode

from p2w_cli.view.app import create_app
from p2w_rt.replay.derived import PassSettings, run_pass
from p2w_rt.replay.judges import JUDGES, make_judge
from p2w_rt.schemas import uuid7
from p2w_runtime.store import open_store
from p2w_runtime.testing.episodes import run_finished, run_started


async def build_run(db: Path, label: str, episodes: int, steps: int) -> tuple[str, float, float]:
    """Append a run of ``episodes`` (one transaction each) and judge it: (run id, append s, first replay s)."""
    rng = random.Random(7)
    run_id = uuid7()
    async with open_store(db) as store:
        started = time.perf_counter()
        await store.append([run_started(run_id, label)])
        for i in range(episodes):
            b = episode(run_id, i, steps, rng)
            await store.append(b.events, b.blobs)
        await store.append([run_finished(run_id, episodes)])
        appended = time.perf_counter() - started
        started = time.perf_counter()
        await run_pass(JUDGES, store, run_id, [make_judge("rubric-rules", PassSettings())])
        replayed = time.perf_counter() - started
    return run_id, appended, replayed


async def _create(db: Path) -> None:
    async with open_store(db):
        pass


def cli(db: Path, *args: str) -> float:
    """CPU seconds (user + system) of ``p2w-rt --db DB ARGS`` in a fresh process: on this shared 2-core machine,
    wall time is mostly waiting for a core, CPU time is the command's own work."""
    command = [str(Path(sys.executable).with_name("p2w-rt")), "--db", str(db), *args]
    env = {**os.environ, "P2W_LOG_FILE": str(db.with_suffix(".log"))}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def best_cli(db: Path, repeat: int, *args: str) -> float:
    return min(cli(db, *args) for _ in range(repeat))


def run_page(db: Path, run_id: str, repeat: int) -> float:
    """Median CPU seconds of this process (which serves it, in a thread) for the warm run page (page 1, 100 rows)
    of ``run_id``, served by uvicorn and fetched over HTTP."""
    server = uvicorn.Server(uvicorn.Config(create_app(db), host="127.0.0.1", port=0, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}/run/{run_id}"
    try:
        urllib.request.urlopen(url, timeout=600).read()  # cold: the run is read once
        times = []
        for _ in range(repeat):
            started = time.process_time()
            urllib.request.urlopen(url, timeout=600).read()
            times.append(time.process_time() - started)
        return statistics.median(times)
    finally:
        server.should_exit = True
        time.sleep(0.2)


NOISE = 0.05
"""Seconds of CPU under which a figure less start-up is start-up's own variation, not work."""


def growth(small: float, big: float, factor: float) -> str:
    if small < NOISE:
        return f"{small:+.3f}s -> {big:+.3f}s (within start-up noise at the smaller size)"
    ratio = big / small
    verdict = "bounded" if ratio < factor / 3 else "linear" if ratio <= factor * 1.2 else "SUPERLINEAR"
    return f"{ratio:6.1f}x ({verdict})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--others", type=int, default=9, help="Unrelated 1,000-episode runs beside the largest one.")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", type=Path, help="Keep the stores here and reuse them on the next run.")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    folder = args.dir or Path(tempfile.mkdtemp())
    folder.mkdir(parents=True, exist_ok=True)
    rows: dict[int, dict[str, float]] = {}
    ids: dict[int, str] = {}
    for size in sizes:
        db, meta = folder / f"scale-{size}.db", folder / f"scale-{size}.txt"
        if not meta.exists():
            db.unlink(missing_ok=True)
            run_id, appended, replayed = asyncio.run(build_run(db, "big", size, args.steps))
            meta.write_text(f"{run_id} {appended} {replayed}\n")
        run_id, appended, replayed = meta.read_text().split()
        ids[size] = run_id
        rows[size] = {"append": float(appended), "bytes": db.stat().st_size, "first replay": float(replayed)}
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    empty = folder / "empty.db"
    asyncio.run(_create(empty))
    startup = best_cli(empty, args.repeat, "runs")
    print(f"start-up (p2w-rt runs, empty store): {startup:.3f}s CPU, taken off the commands' growth")
    for size in sizes:
        db = folder / f"scale-{size}.db"
        cli(db, "runs")  # the first command after building brings the store's summaries up to date
        rows[size]["metrics"] = best_cli(db, args.repeat, "metrics", "big")
        rows[size]["show RUN"] = best_cli(db, args.repeat, "show", "big")
        rows[size]["run page (warm)"] = run_page(db, ids[size], args.repeat * 10)
    names = list(rows[sizes[0]])
    print("append and first replay: wall seconds of the build; metrics, show RUN, run page: CPU seconds")
    print(f"{'episodes':>10} " + " ".join(f"{n:>16}" for n in names))
    for size in sizes:
        cells = [f"{rows[size][n]:>14,.0f} B" if n == "bytes" else f"{rows[size][n]:>15.3f}s" for n in names]
        print(f"{size:>10,} " + " ".join(cells))
    for small, big in zip(sizes, sizes[1:], strict=False):
        factor = big / small
        print(f"{small:,} -> {big:,} episodes ({factor:.0f}x):")
        for n in names:
            less = startup if n in ("metrics", "show RUN") else 0.0
            print(f"  {n:18} {growth(rows[small][n] - less, rows[big][n] - less, factor)}")
    if args.others:
        largest = sizes[-1]
        crowd, meta = folder / f"crowd-{largest}.db", folder / f"crowd-{largest}.txt"
        if not meta.exists():
            shutil.copyfile(folder / f"scale-{largest}.db", crowd)
            for n in range(args.others):
                asyncio.run(build_run(crowd, f"other-{n}", 1000, args.steps))
            meta.write_text("built\n")
        cli(crowd, "runs")
        alone_db = folder / f"scale-{largest}.db"
        print(f"the {largest:,}-episode run beside {args.others} runs of 1,000 episodes, against it alone (CPU):")
        for name, alone, crowded in (
            ("show RUN", best_cli(alone_db, args.repeat, "show", "big"), best_cli(crowd, args.repeat, "show", "big")),
            (
                "run page (warm)",
                run_page(alone_db, ids[largest], args.repeat * 10),
                run_page(crowd, ids[largest], args.repeat * 10),
            ),
        ):
            verdict = "ok" if crowded <= alone * 1.2 else "SLOWER (target within 1.2x)"
            print(f"  {name:18} alone {alone:.3f}s, crowded {crowded:.3f}s: {crowded / alone:.2f}x  {verdict}")


if __name__ == "__main__":
    main()
