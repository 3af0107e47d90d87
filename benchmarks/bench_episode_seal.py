"""What sealing each episode when it finishes costs: time and bytes per episode, with and without the seal.

N episodes of S steps as the agent writes them (``EpisodeWriter``: observation with its AX-tree blob, planner call,
rationale, action; one append per step; then final state and ``episode.finished``), into a fresh store. The
baseline appends the episode's last batch with ``store.append``; the sealed variant with ``append_sealed`` (what
the writer's flush, the importers and ``rerun --record-as`` do): the same append, then one ``episode.sealed`` in
the run's stream. The two run interleaved, several rounds, on separate files; the fastest round of each counts.
Process CPU time (all threads, SQLite's included) is given beside wall time, since wall time on a shared machine
measures the neighbours. Bytes: the events' stored text (payload and envelope columns) and the database file.

    python benchmarks/bench_episode_seal.py [--episodes 200] [--steps 20] [--rounds 3] [--postgres]
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from p2w_runtime.episode import EpisodeWriter, Provenance, attempt_id, episode_seals, episode_started, run_started
from p2w_runtime.store import connect_store
from replay.synthetic import SketchTask
from schemas import Action, EpisodeFinished, FinalState, LlmCall, NewEvent, Observation, ParsedAction, Rationale

TASK = SketchTask("Ann_Lee_A1", "find the usual chinos", "https://www.bing.com/", 1, None)
AX_BYTES = 6_000
"""About a demo page's AX tree as the agent keeps it."""
ROW_TEXT = "length(event_id) + length(stream) + length(type) + length(recorded_at) + length(coalesce(causation_id, ''))"
ROW_TEXT += " + length(payload) + length(blobs) + length(prev_hash) + length(hash)"

Batches = list[tuple[list[NewEvent], dict[str, bytes]]]


@dataclass(frozen=True)
class Round:
    wall_s: float
    cpu_s: float
    seals_s: list[float]
    """Each episode's seal append (sealed rounds only)."""


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


async def record(location: str, episodes: int, steps: int, *, seal: bool) -> Round:
    """Append ``episodes`` episodes, sealing each when it ends if ``seal``."""
    store = await connect_store(location)
    try:
        run_id = f"bench-{time.monotonic_ns()}"
        provenance = Provenance.synthetic("bench")
        await store.append(
            [run_started(run_id, label=run_id, agent="b", model="m", scheme=None, provenance=provenance)]
        )
        planned = [episode(run_id, n, steps) for n in range(episodes)]
        seals: list[float] = []
        wall, cpu = time.perf_counter(), time.process_time()
        for batches in planned:
            for events, blobs in batches[:-1]:
                await store.append(events, blobs)
            if not seal:
                await store.append(*batches[-1])
                continue
            stored = await store.append(*batches[-1])  # append_sealed, its two appends timed apart
            start = time.perf_counter()
            await store.append(episode_seals(stored))
            seals.append(time.perf_counter() - start)
        return Round(time.perf_counter() - wall, time.process_time() - cpu, seals)
    finally:
        await store.close()


def sqlite_bytes(path: Path) -> tuple[int, int]:
    """(the events' stored text, the database file) in bytes, after a checkpoint."""
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        (text,) = conn.execute(f"SELECT sum({ROW_TEXT}) FROM events").fetchone()
        (pages,) = conn.execute("PRAGMA page_count").fetchone()
        (size,) = conn.execute("PRAGMA page_size").fetchone()
    return text, pages * size


def report(name: str, rounds: dict[bool, list[Round]], episodes: int) -> None:
    print(f"\n{name}: {episodes} episodes per round, {len(rounds[False])} rounds of each, interleaved")
    wall = {k: min(r.wall_s for r in v) / episodes for k, v in rounds.items()}
    cpu = {k: min(r.cpu_s for r in v) / episodes for k, v in rounds.items()}
    for kind, label in ((False, "without"), (True, "with")):
        per = f"{wall[kind] * 1e3:7.2f} ms wall, {cpu[kind] * 1e3:6.2f} ms CPU per episode"
        print(f"  {label:7} the seal: {per} (fastest round)")
    print(f"  ratio with/without: {wall[True] / wall[False]:.3f}x wall, {cpu[True] / cpu[False]:.3f}x CPU")
    seals = [t for r in rounds[True] for t in r.seals_s]
    per_episode = statistics.median(r.wall_s / episodes for r in rounds[True])
    median = statistics.median(seals)
    print(
        f"  the seal's own append: {median * 1e3:.2f} ms median, {statistics.mean(seals) * 1e3:.2f} ms mean; "
        f"{median / per_episode:.2%} of an episode's write time in the same rounds"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--postgres", action="store_true", help="Also on a scratch PostgreSQL server.")
    args = parser.parse_args()
    n = args.episodes
    print(f"{n} episodes of {args.steps} steps ({args.steps * 4 + 3} events each, {AX_BYTES} B AX tree per step)")
    with tempfile.TemporaryDirectory() as tmp:
        rounds: dict[bool, list[Round]] = {False: [], True: []}
        for r in range(args.rounds):
            for seal in (False, True):
                rounds[seal].append(asyncio.run(record(str(Path(tmp) / f"{seal}-{r}.db"), n, args.steps, seal=seal)))
        report("SQLite", rounds, n)
        (pt, pf), (st, sf) = sqlite_bytes(Path(tmp) / "False-0.db"), sqlite_bytes(Path(tmp) / "True-0.db")
        print(
            f"  bytes: events' text {pt / n:,.0f} -> {st / n:,.0f} B per episode (+{(st - pt) / n:,.0f} B, ratio "
            f"{st / pt:.4f}x); database file {pf / n:,.0f} -> {sf / n:,.0f} B per episode (ratio {sf / pf:.4f}x)"
        )
    if args.postgres:
        from p2w_runtime.testing.postgres import PostgresServer

        with PostgresServer() as server:
            rounds = {False: [], True: []}
            for _ in range(args.rounds):
                for seal in (False, True):
                    rounds[seal].append(asyncio.run(record(server.fresh_database(), n, args.steps, seal=seal)))
            report("PostgreSQL", rounds, n)


if __name__ == "__main__":
    main()
