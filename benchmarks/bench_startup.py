"""Start-up cost of ``p2w-rt --help``, ``runs`` and ``show RUN``: CPU and wall of each, against ``python -c pass``.

A command a researcher types many times a day should answer at once; what it costs before it does anything is the
imports. Each command runs as a fresh subprocess, N times; the figure is the best run (least noise on a shared
machine), CPU being user+sys of the child (``resource.getrusage(RUSAGE_CHILDREN)`` deltas). ``runs`` and ``show``
read a small SQLite store built once by importing the bundled ``earlier`` example run.

Usage: python benchmarks/bench_startup.py [-n 7] [--db PATH (kept, reused when it exists)]
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
RUN = "earlier"


def measure(command: list[str], env: dict[str, str], repeat: int) -> tuple[float, float]:
    """(best CPU seconds, best wall seconds) of ``command`` over ``repeat`` fresh processes."""
    cpu: list[float] = []
    wall: list[float] = []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return min(cpu), min(wall)


def build(db: Path, env: dict[str, str]) -> None:
    bundle = next(path for path in example_run_bundles() if path.stem == RUN)
    subprocess.run([CLI, "--db", str(db), "import", str(bundle)], env=env, check=True, stdout=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", "--repeat", type=int, default=7)
    parser.add_argument("--db", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        db = args.db or Path(scratch) / "startup.db"
        env = {**os.environ, "P2W_LOG_FILE": str(Path(scratch) / "p2w.log")}
        if not db.exists():
            build(db, env)
        base_cpu, base_wall = measure([sys.executable, "-c", "pass"], env, args.repeat)
        print(f"best of {args.repeat}; baseline python -c pass: cpu {base_cpu:.3f} s, wall {base_wall:.3f} s")
        print(f"{'command':<16} {'cpu s':>7} {'x base':>7} {'wall s':>7} {'x base':>7}")
        for name, tail in (("--help", ["--help"]), ("runs", ["runs"]), (f"show {RUN}", ["show", RUN])):
            cpu, wall = measure([CLI, "--db", str(db), *tail], env, args.repeat)
            print(f"{name:<16} {cpu:>7.3f} {cpu / base_cpu:>7.1f} {wall:>7.3f} {wall / base_wall:>7.1f}")


if __name__ == "__main__":
    main()
