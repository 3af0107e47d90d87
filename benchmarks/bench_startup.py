"""Start-up cost of every daily command (``--help``, ``runs``, ``show``, ``metrics``, ``replay --judge rubric-rules``,
``classify``, ``diff``, ``verify``): CPU and wall of each, against ``python -c pass``.

A command a researcher types many times a day should answer at once; what it costs before it does anything is the
imports. Each command runs as a fresh subprocess, N times; the figure is the best run (least noise on a shared
machine), CPU being user+sys of the child (``resource.getrusage(RUSAGE_CHILDREN)`` deltas). ``runs`` and ``show``
read a small SQLite store built once by importing the bundled ``earlier`` and ``later`` example runs, judged and
classified once, so that ``replay`` and ``classify`` time what a second pass costs: start-up, and finding every
episode cached. Each command runs once
first with bytecode writing on (``PYTHONDONTWRITEBYTECODE`` removed), so that what is timed is an installed
command's start, not Python compiling our modules again on every run.

``--before DIR`` times every command also with ``PYTHONPATH=DIR`` (an export of another commit, e.g.
``git archive COMMIT | tar -x -C DIR``), alternating with this tree's run by run so that both see the same load.
The ``floor`` line is ``import sqlalchemy.ext.asyncio`` alone: the store's async engine, which a command imports when
it sets a store up or runs a statement not compiled ahead (a listing does neither since the fourth round);
``store floor`` is the whole SQLite store module (``STORE_FLOOR``; docs/design/startup.md).

Usage: python benchmarks/bench_startup.py [-n 7] [--db PATH (kept, reused when it exists)] [--before DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from p2w_runtime.demo.examples import example_run_bundles

CLI = str(Path(sys.executable).with_name("p2w-rt"))
STORE_FLOOR = (
    "import atexit, gc; atexit.register(gc.freeze); gc.set_threshold(700, 10, 1000); import p2w_runtime.store.sqlite"
)
"""Importing the SQLite store (aiosqlite, the event models; SQLAlchemy and the tables load on first use) with the
collector set as a command sets it while it starts: what ``runs`` and ``show`` cost before they import anything
else."""
RUN = "earlier"
LATER = "later"
HERE = Path(__file__).resolve().parent.parent


def once(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one fresh process of ``command``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def measure(command: list[str], envs: list[dict[str, str]], repeat: int) -> list[tuple[float, float]]:
    """(best CPU, best wall) of ``command`` under each of ``envs``, alternating between them run by run."""
    for env in envs:
        once(command, env)  # writes the bytecode, warms the file cache
    runs: list[list[tuple[float, float]]] = [[] for _ in envs]
    for _ in range(repeat):
        for i, env in enumerate(envs):
            runs[i].append(once(command, env))
    return [(min(cpu for cpu, _ in r), min(wall for _, wall in r)) for r in runs]


COMMANDS = (
    ("--help", ["--help"]),
    ("runs", ["runs"]),
    (f"show {RUN}", ["show", RUN]),
    (f"metrics {RUN}", ["metrics", RUN]),
    ("replay (cached)", ["replay", RUN, "--judge", "rubric-rules"]),
    ("classify (cached)", ["classify", RUN]),
    (f"diff {RUN} {LATER}", ["diff", RUN, LATER]),
    ("verify", ["verify"]),
)


def build(db: Path, env: dict[str, str]) -> None:
    for bundle in example_run_bundles():
        subprocess.run([CLI, "--db", str(db), "import", str(bundle)], env=env, check=True, stdout=subprocess.DEVNULL)
    for run in (RUN, LATER):
        for tail in (["replay", run, "--judge", "rubric-rules"], ["classify", run]):
            subprocess.run([CLI, "--db", str(db), *tail], env=env, check=True, stdout=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", "--repeat", type=int, default=7)
    parser.add_argument("--db", type=Path)
    parser.add_argument("--before", type=Path, help="a tree of another commit, timed alternately with this one")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        db = args.db or Path(scratch) / "startup.db"
        base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env = {**base, "P2W_LOG_FILE": str(Path(scratch) / "p2w.log"), "PYTHONPATH": str(HERE)}
        envs = [env] if args.before is None else [env, {**env, "PYTHONPATH": str(args.before.resolve())}]
        if not db.exists():
            build(db, env)
        [(base_cpu, base_wall)] = measure([sys.executable, "-c", "pass"], [env], args.repeat)
        load = os.getloadavg()[0]
        print(
            f"best of {args.repeat}; load average {load:.1f}; "
            f"python -c pass: cpu {base_cpu:.3f} s, wall {base_wall:.3f} s"
        )
        header = f"{'command':<18} {'cpu s':>7} {'x pass':>7} {'wall s':>7} {'x pass':>7}"
        print(header + ("" if args.before is None else f"   {'before':>7} {'x pass':>7} {'wall s':>7}"))
        for name, tail in COMMANDS:
            results = measure([CLI, "--db", str(db), *tail], envs, args.repeat)
            (cpu, wall), earlier = results[0], results[1:]
            line = f"{name:<18} {cpu:>7.3f} {cpu / base_cpu:>7.1f} {wall:>7.3f} {wall / base_wall:>7.1f}"
            for b_cpu, b_wall in earlier:
                line += f"   {b_cpu:>7.3f} {b_cpu / base_cpu:>7.1f} {b_wall:>7.3f}"
            print(line)
        for name, code in (("floor", "import sqlalchemy.ext.asyncio"), ("store floor", STORE_FLOOR)):
            [(cpu, wall)] = measure([sys.executable, "-c", code], [env], args.repeat)
            print(f"{name:<18} {cpu:>7.3f} {cpu / base_cpu:>7.1f} {wall:>7.3f} {wall / base_wall:>7.1f}")
        print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
