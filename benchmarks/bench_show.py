"""``p2w-rt show RUN`` and ``show RUN TASK`` on a run with one very long episode: wall time and peak RSS of the real
command, against the same commands on a run with one 30-step episode in the same store.

Listing a run's episodes needs each episode's first event (task, level) and last one (end reason, steps).
Reading every event of every episode made one 200,000-step episode cost 27.5 s and 2.1 GB. Its timeline
(``show RUN TASK``) projected the whole episode before printing a line: 426 s and 2.71 GB. It is now read and
printed a chunk of events at a time, so what is measured for it is the first screen (the first 60 lines on
stdout, the process then stopped as a pager quitting stops it), a window (``--steps 100``, to its end) and, with
``--full``, the whole timeline to the end. Each command runs as a user runs it, in a subprocess, with
``/usr/bin/time -v`` for the peak resident set.

Usage: python benchmarks/bench_show.py [--steps 200000] [--db PATH (kept, reused when it exists)] [--full]
       PYTHONPATH=OTHER_CHECKOUT python benchmarks/bench_show.py --db PATH   # the same run on other code
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from p2w_rt.schemas import uuid7
from p2w_runtime.store import EventStore, open_store
from p2w_runtime.testing.episodes import EpisodeBuilder, run_finished, run_started

BATCH = 2000
"""Steps appended per transaction while building the run."""


SHORT = 30
"""Steps of the baseline episode."""
SCREEN = 60
"""Lines of stdout that make the first screen."""


async def build(db: Path, steps: int) -> None:
    async with open_store(db) as store:
        await _episode(store, "short", SHORT)
        await _episode(store, "long", steps)


async def _episode(store: EventStore, label: str, steps: int) -> None:
    run_id = uuid7()
    await store.append([run_started(run_id, label)])
    episode = EpisodeBuilder(run_id, "Ann_Lee_A1", query="find the usual chinos", level=1)
    for step in range(1, steps + 1):
        episode.observation(step, f"https://shop.example/p/{step}", title=f"page {step}")
        episode.action(step, "click", str(step))
        if step % BATCH == 0 or step == steps:
            if step == steps:
                episode.finish("max_steps", steps=steps)
            await store.append(*episode.writer.take())
    await store.append([run_finished(run_id, 1)])


def _command(db: Path, *args: str) -> tuple[list[str], dict[str, str]]:
    command = ["/usr/bin/time", "-v", str(Path(sys.executable).with_name("p2w-rt")), "--db", str(db), *args]
    return command, {**os.environ, "P2W_LOG_FILE": str(db.with_suffix(".log"))}


def _peak(stderr: str) -> tuple[int, float]:
    """(peak RSS in kB, CPU seconds) as ``/usr/bin/time -v`` reports them."""
    peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr).group(1))  # type: ignore[union-attr]
    cpu = sum(float(x) for x in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", stderr))
    return peak, cpu


Measured = tuple[float, float, int, str]
"""Wall seconds, CPU seconds, peak RSS in kB, stdout."""


def measure(db: Path, *args: str) -> Measured:
    """``p2w-rt ARGS`` run to its end in a fresh process."""
    command, env = _command(db, *args)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    return time.perf_counter() - started, *reversed(_peak(done.stderr)), done.stdout  # type: ignore[return-value]


def first_screen(db: Path, *args: str) -> Measured:
    """``p2w-rt ARGS`` to its first ``SCREEN`` lines (wall and CPU seconds, peak RSS until then), stopped there as a
    pager that quits stops it (the whole command when it prints fewer lines)."""
    command, env = _command(db, *args)
    started = time.perf_counter()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) as child:
        assert child.stdout is not None
        lines = [line for _, line in zip(range(SCREEN), child.stdout, strict=False)]
        seconds = time.perf_counter() - started
        found = subprocess.run(["pgrep", "-P", str(child.pid)], capture_output=True, text=True).stdout.split()
        if found:
            os.kill(int(found[0]), signal.SIGTERM)  # the command, not /usr/bin/time, which then reports its peak
        _, stderr = child.communicate()
    peak, cpu = _peak(stderr)
    return seconds, cpu, peak, "".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=200_000)
    parser.add_argument("--db", type=Path)
    parser.add_argument("--full", action="store_true", help="Also print the long timeline to its end.")
    args = parser.parse_args()
    db = args.db or Path(tempfile.mkdtemp()) / "long.db"
    if not db.exists():
        started = time.perf_counter()
        asyncio.run(build(db, args.steps))
        print(f"built {args.steps} steps ({2 * args.steps + 2} events) in {time.perf_counter() - started:.1f}s: {db}")
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    task = "Ann_Lee_A1"
    cases = [
        ("show RUN (episode listing)", measure, ("show", "short"), ("show", "long")),
        ("show RUN TASK, first screen", first_screen, ("show", "short", task), ("show", "long", task)),
        ("show RUN TASK --steps 100", measure, ("show", "short", task, "--steps", "100"),
         ("show", "long", task, "--steps", "100")),
        ("show RUN TASK --json, first screen", first_screen, ("show", "short", task, "--json"),
         ("show", "long", task, "--json")),
    ]  # fmt: skip
    if args.full:
        cases.append(("show RUN TASK, to the end", measure, ("show", "short", task), ("show", "long", task)))
    print(f"{'':36} {SHORT:>6}-step episode          {args.steps:>7}-step episode          ratio")
    print(f"{'command':36} {'wall':>7} {'CPU':>7} {'RSS':>7}   {'wall':>8} {'CPU':>7} {'RSS':>7}   wall, CPU, RSS")
    for name, how, short, long in cases:
        s_time, s_cpu, s_peak, _ = how(db, *short)
        l_time, l_cpu, l_peak, out = how(db, *long)
        assert task in out or "max_steps" in out, out
        print(
            f"{name:36} {s_time:6.2f}s {s_cpu:6.2f}s {s_peak / 1024:4.0f} MB   {l_time:7.2f}s {l_cpu:6.2f}s "
            f"{l_peak / 1024:4.0f} MB   {l_time / s_time:.2f}x, {l_cpu / s_cpu:.2f}x, {l_peak / s_peak:.2f}x"
        )


if __name__ == "__main__":
    main()
