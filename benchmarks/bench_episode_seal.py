"""What sealing each episode when it finishes costs: time and bytes per episode, with and without the seal.

N episodes of S steps as the agent writes them (``EpisodeWriter``: observation with its AX-tree blob, planner call,
rationale, action; one append per step; then final state and ``episode.finished``). An episode with the seal ends
as ``append_sealed`` ends it (what the writer's flush, the importers and ``rerun --record-as`` do): its last append,
then one ``episode.sealed`` in the run's stream; one without ends with the last append alone. Timing is paired:
sealed and unsealed episodes alternate in the same store, so both meet the same load (wall time on a shared
machine measures the neighbours; process CPU time, all threads, SQLite's included, is given beside it). The
figures are medians per episode, the seal's own append timed apart. Bytes: the same episodes all sealed and all
unsealed, each into a fresh file: the events' stored text (payload and envelope columns) and the database file.

    python benchmarks/bench_episode_seal.py [--episodes 200] [--steps 20] [--rounds 3] [--postgres]
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import tempfile
import time
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from p2w_rt.schemas import Action, EpisodeFinished, FinalState, LlmCall, NewEvent, Observation, ParsedAction, Rationale
from p2w_runtime.domain import EpisodeWriter, Provenance, RunSpec, attempt_id, episode_seals, episode_started, start_run
from p2w_runtime.store import _segments, connect_store
from p2w_runtime.testing.episodes import SketchTask

_segments.SEGMENT_MIN_EVENTS = 10**9
"""The baseline is plain SQL on ``events`` rows: every event stays a row here (segments: ``bench_bytes.py``)."""

TASK = SketchTask("Ann_Lee_A1", "find the usual chinos", "https://www.bing.com/", 1, None)
AX_BYTES = 6_000
"""About a demo page's AX tree as the agent keeps it."""
ROW_TEXT = "length(event_id) + length(stream) + length(type) + length(recorded_at) + length(coalesce(causation_id, ''))"
ROW_TEXT += " + length(payload) + length(blobs) + length(prev_hash) + length(hash)"

Batches = list[tuple[list[NewEvent], dict[str, bytes]]]


@dataclass
class Timings:
    wall_s: dict[bool, list[float]] = field(default_factory=lambda: {False: [], True: []})
    """Per episode, by whether it was sealed."""
    cpu_s: dict[bool, list[float]] = field(default_factory=lambda: {False: [], True: []})
    seal_s: list[float] = field(default_factory=list)
    """The seal's own append."""


def episode(run_id: str, n: int, steps: int) -> Batches:
    """One episode's appends, as the agent flushes them: one per step, the end last."""
    episode_id = attempt_id(TASK.task_id, n + 1)
    writer = EpisodeWriter.of(run_id, episode_id)
    writer.add(episode_started(TASK, episode_id=episode_id, scheme="on-demand"))
    batches: Batches = []
    for step in range(1, steps + 1):
        page = (f"[{n}.{step}] link 'Chinos, slim fit, size 32' " * (AX_BYTES // 40))[:AX_BYTES].encode()
        writer.add(
            Observation(step=step, url=f"http://127.0.0.1/shop/{n}/{step}", title="shop", ax_tree=writer.blob(page))
        )
        writer.add(
            LlmCall(role="planner", model="m", step=step, messages=[], latency_s=0.5, fingerprint="f", ordinal=0)
        )
        writer.add(Rationale(step=step, source="planner", text=f"step {step}: the chinos are one click away"))
        parsed = ParsedAction(name="click", args=[str(step)])
        writer.add(Action(step=step, raw=parsed.render(), parsed=parsed, status="executed"))
        batches.append(writer.take())
    writer.add(FinalState(url=f"http://127.0.0.1/shop/{n}/done", title="done"))
    writer.add(EpisodeFinished(end_reason="answered", answer="the slim chinos", steps=steps))
    batches.append(writer.take())
    return batches


async def record(location: str, episodes: int, steps: int, timings: Timings, *, seal: bool | None = None) -> None:
    """Append ``episodes`` episodes, every other one sealed (or all or none, ``seal``), timing each."""
    store = await connect_store(location)
    try:
        run_id = f"bench-{time.monotonic_ns()}"
        spec = RunSpec(label=run_id, agent="bench", model="m", scheme=None, provenance=Provenance.synthetic("bench"))
        await start_run(store, spec, run_id=run_id)
        planned = [episode(run_id, n, steps) for n in range(episodes)]
        for n, batches in enumerate(planned):
            sealed = n % 2 == 1 if seal is None else seal
            wall, cpu = time.perf_counter(), time.process_time()
            for events, blobs in batches:
                stored = await store.append(events, blobs)
            if sealed:  # append_sealed, its second append timed apart
                start = time.perf_counter()
                await store.append(episode_seals(stored))
                timings.seal_s.append(time.perf_counter() - start)
            timings.wall_s[sealed].append(time.perf_counter() - wall)
            timings.cpu_s[sealed].append(time.process_time() - cpu)
    finally:
        await store.close()


def sqlite_bytes(path: Path) -> tuple[int, int]:
    """(the events' stored text, the database file) in bytes, after a checkpoint."""
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        (text,) = conn.execute(f"SELECT sum({ROW_TEXT}) FROM events").fetchone()
        (pages,) = conn.execute("PRAGMA page_count").fetchone()
        (size,) = conn.execute("PRAGMA page_size").fetchone()
    return text, pages * size


def report(name: str, timings: Timings) -> None:
    wall = {k: statistics.median(v) for k, v in timings.wall_s.items()}
    cpu = {k: statistics.median(v) for k, v in timings.cpu_s.items()}
    print(
        f"\n{name}: {len(timings.wall_s[True])} sealed and {len(timings.wall_s[False])} unsealed episodes, alternating"
    )
    for kind, label in ((False, "without"), (True, "with")):
        print(
            f"  {label:7} the seal: {wall[kind] * 1e3:7.2f} ms wall, {cpu[kind] * 1e3:6.2f} ms CPU per episode (median)"
        )
    print(f"  ratio with/without: {wall[True] / wall[False]:.3f}x wall, {cpu[True] / cpu[False]:.3f}x CPU")
    seal = statistics.median(timings.seal_s)
    share = seal / wall[False]
    print(f"  the seal's own append: {seal * 1e3:.2f} ms median = {share:.2%} of an unsealed episode's writes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--postgres", action="store_true", help="Also on a scratch PostgreSQL server.")
    args = parser.parse_args()
    n, steps = args.episodes, args.steps
    shape = f"{steps} steps ({steps * 4 + 3} events, a {AX_BYTES} B AX tree each step)"
    print(f"{n} episodes per round, {args.rounds} rounds, {shape}")
    with tempfile.TemporaryDirectory() as tmp:
        timings = Timings()
        for r in range(args.rounds):
            asyncio.run(record(str(Path(tmp) / f"paired-{r}.db"), n, steps, timings))
        report("SQLite", timings)
        files = {seal: Path(tmp) / f"all-{seal}.db" for seal in (False, True)}
        for seal, path in files.items():
            asyncio.run(record(str(path), n, steps, Timings(), seal=seal))
        (pt, pf), (st, sf) = sqlite_bytes(files[False]), sqlite_bytes(files[True])
        print(
            f"  bytes: events' text {pt / n:,.0f} -> {st / n:,.0f} B per episode (+{(st - pt) / n:,.0f} B, ratio "
            f"{st / pt:.4f}x); database file {pf / n:,.0f} -> {sf / n:,.0f} B per episode (ratio {sf / pf:.4f}x)"
        )
    if args.postgres:
        from p2w_runtime.testing.postgres import PostgresServer

        with PostgresServer() as server:
            timings = Timings()
            for _ in range(args.rounds):
                asyncio.run(record(server.fresh_database(), n, steps, timings))
            report("PostgreSQL", timings)


if __name__ == "__main__":
    main()
