"""``p2w-rt verify`` of a recorded store against ``sha256sum`` of its file and SQLite's ``PRAGMA integrity_check``.

The store is one run of bench_replay's synthetic episodes (``--steps`` 30: 102 events each), every episode appended
and sealed as a recording writes it (``append_sealed``: one ``episode.sealed`` in the run's stream, then the episode
compacted into segments; ``--rows``: every event kept a row, as with ``P2W_COMPACT=off``), so 10,000 episodes are
1.04 M events. Kept in ``--dir`` and reused when it is there.

Measured in one run, best of ``--repeat``, wall seconds and CPU seconds (the process and its workers), the file warm
in the page cache for all of them:

- ``p2w-rt verify --full`` (a subprocess, as a user runs it: start-up included): every event, seal and blob;
- ``p2w-rt verify`` right after, on the unchanged store: the incremental check after the last verify mark;
- the same check in this process (the store open, no interpreter start-up), and ``p2w-rt runs`` for the start-up
  every command pays;
- ``sha256sum`` of the database file (the anchor: reading and hashing every byte once, one core);
- ``PRAGMA integrity_check`` (SQLite's own walk of every page and index).

``--before DIR`` times both ``verify`` figures also with ``PYTHONPATH=DIR`` (an export of another commit, its
bytecode compiled as this tree's is), the two trees alternated run by run. The machine may be shared: the load
average is printed before and after, and the ratios to the anchors measured in the same run are what compare.

Usage: python benchmarks/bench_verify.py [--episodes 10000] [--rows] [--dir DIR] [--repeat 3] [--before DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from p2w_runtime.store import _segments  # noqa: E402

SEGMENT_MIN_EVENTS = _segments.SEGMENT_MIN_EVENTS
from bench_replay import episode  # noqa: E402  # it keeps every event a row: put back below unless --rows

from p2w_rt.schemas import uuid7  # noqa: E402
from p2w_runtime.domain import append_sealed  # noqa: E402
from p2w_runtime.store import open_store, verify_whole_store  # noqa: E402
from p2w_runtime.testing.episodes import run_finished, run_started  # noqa: E402

P2W_RT = str(Path(sys.executable).with_name("p2w-rt"))
LOG_END = (
    "SELECT max(coalesce((SELECT max(position) FROM events), 0),"
    " coalesce((SELECT max(last_position) FROM segments), 0))"
)


async def build(db: Path, episodes: int, steps: int) -> None:
    rng = random.Random(7)
    run_id = uuid7()
    async with open_store(db) as store:
        await store.append([run_started(run_id, "verify-bench")])
        for i in range(episodes):
            b = episode(run_id, i, steps, rng)
            await append_sealed(store, b.events, b.blobs)
            if (i + 1) % 1000 == 0:
                print(f"  built {i + 1} episodes", flush=True)
        await append_sealed(store, [run_finished(run_id, episodes)])


def once(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and the workers it waited for) of one run of ``command``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False, env=env)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def best(repeat: int, command: list[str], envs: list[dict[str, str] | None]) -> list[tuple[float, float]]:
    """(best wall, best CPU) of ``command`` under each of ``envs``, alternating between them run by run."""
    runs: list[list[tuple[float, float]]] = [[] for _ in envs]
    for _ in range(repeat):
        for i, env in enumerate(envs):
            runs[i].append(once(command, env))
    return [(min(w for w, _ in done), min(c for _, c in done)) for done in runs]


def in_process(db: Path, repeat: int) -> tuple[float, int]:
    """The incremental check of the unchanged store in this process (no start-up; the store opened once): best
    seconds, and the events it read."""

    async def check() -> tuple[float, int]:
        async with open_store(db, create=False, read_only=True) as store:
            seconds, events = [], 0
            for _ in range(repeat):
                started = time.perf_counter()
                report = await verify_whole_store(store)
                seconds.append(time.perf_counter() - started)
                assert report.ok and report.incremental, report.full_because
                events = report.events
            return min(seconds), events

    return asyncio.run(check())


def integrity_check(db: Path) -> float:
    started = time.perf_counter()
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn, conn:
        (result,) = conn.execute("PRAGMA integrity_check").fetchone()
    assert result == "ok", result
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rows", action="store_true", help="every event a row (P2W_COMPACT=off), not segments")
    parser.add_argument("--dir", type=Path, help="where the store is kept (and reused); default: a temporary folder")
    parser.add_argument("--before", type=Path, help="a tree of another commit, timed alternately with this one")
    args = parser.parse_args()
    folder = args.dir or Path(tempfile.mkdtemp(prefix="bench-verify-"))
    folder.mkdir(parents=True, exist_ok=True)
    if not args.rows:
        _segments.SEGMENT_MIN_EVENTS = SEGMENT_MIN_EVENTS
    db = folder / f"verify-{args.episodes}x{args.steps}{'-rows' if args.rows else ''}.db"
    if not db.exists():
        print(f"building {args.episodes} episodes of {args.steps} steps in {db.name} ...", flush=True)
        started = time.perf_counter()
        asyncio.run(build(db, args.episodes, args.steps))
        print(f"  built in {time.perf_counter() - started:.0f} s", flush=True)
    with closing(sqlite3.connect(db)) as conn, conn:
        (events,) = conn.execute(LOG_END).fetchone()
    size = db.stat().st_size
    cores = os.cpu_count()
    print(f"store: {args.episodes} episodes, log end at position {events:,}, {size / 1e6:.0f} MB; {cores} cores")
    print(f"load average {os.getloadavg()[0]:.2f} at the start (best of {args.repeat}; wall s, CPU s)")
    once(["cat", str(db)])  # warm the page cache for every figure alike
    trees: list[tuple[str, dict[str, str] | None]] = [("", None)]
    if args.before is not None:
        trees.append((" (before)", {**os.environ, "PYTHONPATH": str(args.before.resolve())}))
    envs = [env for _, env in trees]
    verify = [P2W_RT, "--db", str(db), "verify"]
    full = best(args.repeat, [*verify, "--full"], envs)
    incremental = best(args.repeat, verify, envs)
    startup = best(args.repeat, [P2W_RT, "--db", str(db), "runs", "--json"], [None])[0]
    check_only, read = in_process(db, args.repeat)
    sha = best(args.repeat, ["sha256sum", str(db)], [None])[0][0]
    check = min(integrity_check(db) for _ in range(args.repeat))
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    print(f"sha256sum of the file           {sha:8.2f} s")
    print(f"PRAGMA integrity_check          {check:8.2f} s  ({check / sha:.2f}x sha256sum)")
    for (name, _), (wall, cpu) in zip(trees, full, strict=True):
        ratios = f"{wall / sha:.2f}x sha256sum, {wall / check:.2f}x integrity_check; CPU {cpu:.2f} s"
        print(f"{'verify --full' + name:32s}{wall:8.2f} s  ({ratios})")
    for (name, _), (wall, cpu) in zip(trees, incremental, strict=True):
        label = "verify, incremental, unchanged" + name
        print(f"{label:32s}{wall:8.2f} s  ({wall / sha:.3f}x sha256sum; CPU {cpu:.2f} s)")
    print(f"  of which the check itself     {check_only:8.3f} s  (in one process, {read} events read)")
    print(f"  p2w-rt runs, for start-up     {startup[0]:8.2f} s  (CPU {startup[1]:.2f} s)")


if __name__ == "__main__":
    main()
