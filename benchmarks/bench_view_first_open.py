"""Viewer benchmark: the first open of a run page (cold: a fresh viewer process, its store opened, its first request),
for a 1,000-episode run, a 10,000-episode run, and that run in a store with 9 other runs of 1,000 episodes.

The runs are bench_view's (an LLM call per step, a screenshot and AX tree per observation, judged with ``rubric-rules``
and classified with ``rules``) with ``--steps`` steps per episode: the figure is about the episode count. Each figure is
the median of ``--repeat`` fresh processes (``python THIS --serve-once DB RUN``): uvicorn on 127.0.0.1 serving
``create_app(DB)``, the run page fetched once over HTTP; the process's CPU (the page is served in a thread of it) and
the wall time of that fetch. The ratio is to the 1,000-episode run's figure measured in the same run. Two tables: the
first open with the run's first-page row current (``p2w_cli/view/_first_page.py``: what every fresh viewer finds once
one has opened the run), and with that row deleted before the process starts (the first open after a change to the run:
the run's scores, labels and episodes read, its usage continued from the kept scan of ``p2w_cli/view/_usage_kept.py``,
and the row written back). A third table times a judging pass through the CLI (``p2w-rt replay RUN --judge rubric-rules
--force``, its CPU, on a fresh copy of each store each time) and the first open after it, alternately with the run's
first-page row deleted before the pass (no viewer stored one: the pass leaves the page to the open, which builds it) and
with the row stored (the pass brings it up to date as it ends: ``p2w_cli/view/_refresh.py``), and the same pass run by
a script (``judge_runs`` in a store opened by ``open_store``, which brings the row up to date as it closes).
``--profile`` prints the cProfile of one first open of the 10,000-episode run's page (in process, no HTTP).

Usage: python benchmarks/bench_view_first_open.py [--dir DIR (stores kept and reused)] [--steps 2] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import pstats
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from contextlib import closing
from pathlib import Path

OTHERS = 9


def copy_store(source: Path, target: Path) -> None:
    """The store as its last commit left it, write-ahead log included (a viewer process killed at exit leaves one
    behind; the file alone, half checkpointed, can read as malformed)."""
    target.unlink(missing_ok=True)
    with closing(sqlite3.connect(source)) as read, closing(sqlite3.connect(target)) as write:
        read.backup(write)


def serve_once(db: Path, run_id: str, row: str) -> None:
    """In a fresh process: start the viewer, fetch the run page once, print its wall and CPU seconds as JSON;
    ``row`` ``deleted``: the first-page rows are deleted first."""
    import uvicorn

    from p2w_cli.view.app import create_app

    if row == "deleted":
        delete_first_pages(db)

    server = uvicorn.Server(uvicorn.Config(create_app(db), host="127.0.0.1", port=0, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.02)
    url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}/run/{run_id}"
    started, cpu = time.perf_counter(), time.process_time()
    with urllib.request.urlopen(url, timeout=600) as response:
        size = len(response.read())
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    print(json.dumps({"wall": wall, "cpu": cpu, "bytes": size}))
    server.should_exit = True


def this_script(*args: str) -> tuple[list[str], dict[str, str]]:
    """The command and environment that run this file again in a fresh process (``--serve-once``, ``--judge-once``)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), *sys.path])}
    return [sys.executable, __file__, *args], env


def first_open(db: Path, run_id: str, row: str = "kept") -> dict[str, float]:
    command, env = this_script("--serve-once", str(db), run_id, row)
    out = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


async def build(db: Path, episodes: int, steps: int, label: str) -> str:
    from bench_view import build as build_run

    run_id, _, _ = await build_run(db, episodes, steps, label)
    return run_id


def store(folder: Path, name: str, episodes: int, steps: int, base: Path | None = None) -> tuple[Path, str]:
    """The store ``name`` (built once, then reused): a run of ``episodes``, or ``base`` copied and ``OTHERS`` runs
    of 1,000 episodes added beside its run."""
    db, ids = folder / f"{name}.db", folder / f"{name}.ids"
    if ids.exists():
        return db, ids.read_text().strip()
    started = time.perf_counter()
    db.unlink(missing_ok=True)
    if base is None:
        run_id = asyncio.run(build(db, episodes, steps, name))
    else:
        copy_store(base, db)
        run_id = (folder / f"{base.stem}.ids").read_text().strip()
        for n in range(OTHERS):
            asyncio.run(build(db, 1000, steps, f"other-{n}"))
    ids.write_text(run_id + "\n")
    print(f"built {name} in {time.perf_counter() - started:.0f}s", flush=True)
    return db, run_id


def profile(db: Path, run_id: str) -> None:
    from p2w_cli.view._filters import parse_filter
    from p2w_cli.view._links import ServerLinks
    from p2w_cli.view._pages import ViewQueries, ViewState
    from p2w_cli.view._render import environment
    from p2w_runtime.store import open_store

    async def once() -> None:
        state = ViewState(db)
        async with open_store(db, create=False) as opened:
            state.stores[db.resolve()] = opened
            page = await ViewQueries(state).run(run_id, *parse_filter({}))
            environment().get_template("run.html").render(links=ServerLinks(), source=str(db), p=page)

    profiler = cProfile.Profile()
    profiler.enable()
    asyncio.run(once())
    profiler.disable()
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, help="Keep the stores here and reuse them on the next run.")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--serve-once", nargs=3, metavar=("DB", "RUN", "ROW"), help=argparse.SUPPRESS)
    parser.add_argument("--judge-once", nargs=2, metavar=("DB", "RUN"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_once:
        serve_once(Path(args.serve_once[0]), args.serve_once[1], args.serve_once[2])
        return
    if args.judge_once:
        judge_once(Path(args.judge_once[0]), args.judge_once[1])
        return
    folder = args.dir or Path(tempfile.mkdtemp())
    folder.mkdir(parents=True, exist_ok=True)
    small = store(folder, "first-open-1000", 1000, args.steps)
    big = store(folder, "first-open-10000", 10000, args.steps)
    crowd = store(folder, "first-open-crowd", 0, args.steps, base=big[0])
    if args.profile:
        profile(*big)
        return
    cases = {"1,000 episodes": small, "10,000 episodes": big, f"10,000 beside {OTHERS} runs of 1,000": crowd}
    for db, run_id in cases.values():
        first_open(db, run_id)  # the summary rows brought up to date once, as after any recording
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    table(cases, "kept", args.repeat, "first-page row current")
    table(cases, "deleted", max(1, args.repeat // 2), "first-page row deleted: the page built, the row written")
    after_pass(cases, max(2, args.repeat - 1), folder)
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores")


def table(cases: dict[str, tuple[Path, str]], row: str, repeat: int, title: str) -> None:
    walls: dict[str, list[float]] = {name: [] for name in cases}
    cpus: dict[str, list[float]] = {name: [] for name in cases}
    sizes: dict[str, int] = {}
    for _ in range(repeat):  # interleaved, so a change of load moves every case alike
        for name, (db, run_id) in cases.items():
            got = first_open(db, run_id, row)
            walls[name].append(got["wall"])
            cpus[name].append(got["cpu"])
            sizes[name] = int(got["bytes"])
    base = next(iter(cases))
    base_wall, base_cpu = statistics.median(walls[base]), statistics.median(cpus[base])
    print(f"run page, first open (fresh process), {title}, median of {repeat}:")
    print(f"{'run':34} {'wall':>8} {'CPU':>8} {'bytes':>9} {'wall / 1,000':>13} {'CPU / 1,000':>12}")
    for name in cases:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        verdict = "ok" if wall < 0.5 and wall <= base_wall * 1.2 else "over target (< 0.5 s, <= 1.2x)"
        print(
            f"{name:34} {wall * 1000:6.0f}ms {cpu * 1000:6.0f}ms {sizes[name]:9,} {wall / base_wall:12.2f}x "
            f"{cpu / base_cpu:11.2f}x  {verdict}"
        )


def child_cpu(command: list[str], env: dict[str, str] | None = None) -> float:
    """The CPU seconds of ``command`` run to its end (less moved by other load than wall); its error if it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def judging_pass(db: Path, run_id: str) -> float:
    """The CPU seconds of ``p2w-rt replay RUN --judge rubric-rules --force``."""
    p2w_rt = str(Path(sys.executable).with_name("p2w-rt"))
    return child_cpu([p2w_rt, "--db", str(db), "replay", run_id, "--judge", "rubric-rules", "--force"])


def library_pass(db: Path, run_id: str) -> float:
    """The CPU seconds of the same pass run by a script: ``judge_runs`` in a store opened by ``open_store``."""
    return child_cpu(*this_script("--judge-once", str(db), run_id))


def judge_once(db: Path, run_id: str) -> None:
    """In a fresh process: what a researcher's script does, no command involved."""
    from p2w_rt.replay.judges import JudgeOptions, judge_runs
    from p2w_runtime.store import open_store

    async def judge() -> None:
        async with open_store(db, create=False) as opened:
            await judge_runs(opened, [run_id], JudgeOptions(judges=("rubric-rules",), force=True))

    asyncio.run(judge())


def delete_first_pages(db: Path) -> None:
    """The first-page rows and their mark deleted: the next open (or a pass's refresh, none then) builds them."""
    from p2w_cli.view._first_page import MODEL
    from p2w_runtime.store import open_store

    async def delete() -> None:
        async with open_store(db, create=False) as opened:
            await opened.clear_summaries(MODEL, [MODEL])

    asyncio.run(delete())


def after_pass(cases: dict[str, tuple[Path, str]], repeat: int, folder: Path) -> None:
    """The first open after a judging pass, with no page stored before the pass and with one (then refreshed); each
    pass on a fresh copy of the store, so every one appends the same judgments to the same run."""
    figures: dict[tuple[str, str], list[float]] = {}
    for _ in range(repeat):
        for name, (db, run_id) in cases.items():
            for stored in ("no page", "page", "script"):
                copy = folder / f"after-pass-{db.name}"
                copy_store(db, copy)
                if stored == "no page":
                    delete_first_pages(copy)
                judge = library_pass if stored == "script" else judging_pass
                figures.setdefault((name, stored + " pass"), []).append(judge(copy, run_id))
                figures.setdefault((name, stored + " open"), []).append(first_open(copy, run_id)["wall"])
                copy.unlink()
    print(f"a judging pass (rubric-rules --force), then a fresh viewer's first open, median of {repeat}:")
    print(
        f"{'run':34} {'pass CPU, no page':>18} {'page':>7} {'script':>7} {'open after, no page':>20} "
        f"{'page':>7} {'script':>7}"
    )
    base = {mode: statistics.median(figures[(next(iter(cases)), mode + " open")]) for mode in ("page", "script")}
    for name in cases:
        keys = ("no page pass", "page pass", "script pass", "no page open", "page open", "script open")
        got = [statistics.median(figures[(name, key)]) for key in keys]
        print(
            f"{name:34} {got[0]:17.2f}s {got[1]:6.2f}s {got[2]:6.2f}s {got[3] * 1000:18.0f}ms "
            f"{got[4] * 1000:5.0f}ms {got[5] * 1000:5.0f}ms  {got[4] / base['page']:.2f}x / "
            f"{got[5] / base['script']:.2f}x  (the page's refresh: {got[1] - got[0]:+.2f} s of the pass's CPU)"
        )


if __name__ == "__main__":
    main()
