"""``p2w-rt show RUN`` on a run with one very long episode: wall time and peak RSS of the real command.

Listing a run's episodes needs each episode's first event (task, level) and last one (end reason, steps).
Reading every event of every episode made one 200,000-step episode cost 27.5 s and 2.1 GB; this measures the
command as a user runs it, in a subprocess, with ``/usr/bin/time -v`` for the peak resident set.

Usage: python benchmarks/bench_show.py [--steps 200000] [--db PATH (kept, reused when it exists)]
       PYTHONPATH=OTHER_CHECKOUT python benchmarks/bench_show.py --db PATH   # the same run on other code
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from p2w_runtime.store import open_store
from replay.synthetic import EpisodeBuilder, run_finished, run_started
from schemas import uuid7

BATCH = 2000
"""Steps appended per transaction while building the run."""


async def build(db: Path, steps: int) -> None:
    run_id = uuid7()
    async with open_store(db) as store:
        await store.append([run_started(run_id, "long")])
        episode = EpisodeBuilder(run_id, "Ann_Lee_A1", query="find the usual chinos", level=1)
        for step in range(1, steps + 1):
            episode.observation(step, f"https://shop.example/p/{step}", title=f"page {step}")
            episode.action(step, "click", str(step))
            if step % BATCH == 0 or step == steps:
                if step == steps:
                    episode.finish("max_steps", steps=steps)
                await store.append(*episode.writer.take())
        await store.append([run_finished(run_id, 1)])


def measure(db: Path) -> tuple[float, int, str]:
    """(seconds, peak RSS in kB, stdout) of ``p2w-rt show long`` in a fresh process."""
    command = [str(Path(sys.executable).with_name("p2w-rt")), "--db", str(db), "show", "long"]
    env = {**os.environ, "P2W_LOG_FILE": str(db.with_suffix(".log"))}
    started = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-v", *command], capture_output=True, text=True, env=env, check=True)
    seconds = time.perf_counter() - started
    peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1))  # type: ignore[union-attr]
    return seconds, peak, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=200_000)
    parser.add_argument("--db", type=Path)
    args = parser.parse_args()
    db = args.db or Path(tempfile.mkdtemp()) / "long.db"
    if not db.exists():
        started = time.perf_counter()
        asyncio.run(build(db, args.steps))
        print(f"built {args.steps} steps ({2 * args.steps + 2} events) in {time.perf_counter() - started:.1f}s: {db}")
    seconds, peak, out = measure(db)
    assert "max_steps" in out, out
    print(f"p2w-rt show long: {seconds:.2f} s, peak RSS {peak / 1024:.0f} MB")


if __name__ == "__main__":
    main()
