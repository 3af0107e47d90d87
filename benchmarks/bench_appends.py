"""Per-step appends: the store against eventsourcing's SQLite recorder on the same events, in one run.

One episode of N steps as the agent writes them (``bench_episode_writer.plan``: an observation, the planner's
``llm.call`` and rationale, an action, every third step a history access; ~5 events a step), built beforehand on
both sides. The store's side is what the agent does with them: the episode grammar admits each event
(``EpisodeWriter.extend``), ``flush`` once per step, so each step is one transaction that reads the end of the
log, seals each event (canonical JSON, sha256 chain) and commits.

eventsourcing's side (``SQLiteApplicationRecorder.insert_events``, one call per step) gets the same events already
sealed: the stream as ``originator_id``, seq as version, type as topic, the canonical payload JSON as state. It
neither hashes nor checks a grammar. It runs twice: as installed (SQLite's ``synchronous=FULL``, an fsync every
commit: the configuration issue 28's 2.98x matches), and at the store's durability
(``synchronous=NORMAL``, WAL both); the store is compared with each (docs/design/store.md, "Appends, fifth round").

Figures are wall and process CPU time, the median of ``--rounds`` alternated rounds, each in a new file.
eventsourcing is not a dependency of p2w-rt: it is installed for this benchmark only, in a virtual environment of its
own (``--eventsourcing-venv``, made on first use), and runs there (``_eventsourcing_round.py``), timing its own
appends.

Usage: python benchmarks/bench_appends.py [--steps 2000] [--rounds 3] [--eventsourcing-venv DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _bench_venv import CACHE, peer_python  # noqa: E402
from bench_episode_writer import STREAM, Planned, plan  # noqa: E402

from p2w_rt.schemas import GENESIS_HASH, NewEvent, Observation, StoredEvent  # noqa: E402
from p2w_runtime.domain import EpisodeWriter  # noqa: E402
from p2w_runtime.store import open_store  # noqa: E402

EVENTSOURCING_VERSION = "9.5.6"
HERE = Path(__file__).parent
Timed = tuple[float, float]
"""Wall and CPU seconds."""


def steps_of(planned: list[Planned]) -> list[list[Planned]]:
    """The plan cut before each observation: one list per agent step (the episode's start joins the first)."""
    steps: list[list[Planned]] = [[]]
    for item in planned:
        if isinstance(item[0], Observation) and steps[-1] and any(isinstance(p, Observation) for p, _ in steps[-1]):
            steps.append([])
        steps[-1].append(item)
    return steps


def new_events(steps: list[list[Planned]]) -> list[list[NewEvent]]:
    """The steps' events, built as the agent builds them (ids, causes), before any clock starts."""
    built: list[NewEvent] = []
    out: list[list[NewEvent]] = []
    for step in steps:
        out.append([])
        for payload, cause in step:
            causation = built[cause].event_id if cause is not None else None
            built.append(NewEvent(stream=STREAM, payload=payload, causation_id=causation))
            out[-1].append(built[-1])
    return out


async def p2w_round(steps: list[list[NewEvent]], db: Path) -> tuple[Timed, float, list[StoredEvent]]:
    """The store's round: its wall and CPU time, the CPU time of the grammar's checks within it, the events."""
    grammar = 0.0
    async with open_store(db) as store:
        writer = EpisodeWriter(STREAM, store)
        wall, cpu = time.perf_counter(), time.process_time()
        for step in steps:
            checked = time.process_time()
            writer.extend(step)  # the grammar checks each event
            grammar += time.process_time() - checked
            await writer.flush()
        await writer.settle()
        timed = time.perf_counter() - wall, time.process_time() - cpu
        events = [event async for event in store.read_stream(STREAM)]
    return timed, grammar, events


def sealing_round(steps: list[list[NewEvent]]) -> tuple[float, float]:
    """CPU seconds of sealing the events alone (canonical JSON, then the sha256 chain), and of the sha256 alone."""
    events = [event for step in steps for event in step]
    started, prev = time.process_time(), GENESIS_HASH
    sealed = []
    for seq, event in enumerate(events, 1):
        stored = StoredEvent.seal(event, seq=seq, prev_hash=prev, position=seq)
        sealed.append(stored)
        prev = stored.hash
    sealing = time.process_time() - started
    started = time.process_time()
    for stored in sealed:
        stored.compute_hash()
    return sealing, time.process_time() - started


def eventsourcing_round(sealed: list[list[StoredEvent]], python: Path, db: Path, *, synchronous: str) -> Timed:
    """eventsourcing's appends of the same steps, in its own environment's interpreter (``_eventsourcing_round.py``):
    the wall and CPU seconds of its ``insert_events`` calls alone."""
    source = db.with_suffix(".json")
    source.write_text(json.dumps([[[e.stream, e.seq, e.type, e.payload_json] for e in step] for step in sealed]))
    done = subprocess.run(
        [str(python), str(HERE / "_eventsourcing_round.py"), str(source), str(db), synchronous],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    wall, cpu = (float(x) for x in done.stdout.split())
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    default = CACHE / "eventsourcing-venv"
    parser.add_argument("--eventsourcing-venv", type=Path, default=default, help=f"default: {default}")
    args = parser.parse_args()
    python = peer_python(args.eventsourcing_venv, f"eventsourcing=={EVENTSOURCING_VERSION}")
    steps = new_events(steps_of(plan(args.steps)))
    n_events = sum(len(step) for step in steps)
    ours: list[Timed] = []
    grammar: list[float] = []
    sealing: list[tuple[float, float]] = []
    theirs: list[Timed] = []
    theirs_full: list[Timed] = []
    gc.freeze()
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.rounds):
            timed, checks, events = asyncio.run(p2w_round(steps, Path(tmp) / f"p2w{i}.db"))
            ours.append(timed)
            grammar.append(checks)
            sealing.append(sealing_round(steps))
            by_id = {e.event_id: e for e in events}
            cut = iter(events)
            sealed = [[next(cut) for _ in step] for step in steps]
            assert len(by_id) == n_events
            theirs.append(eventsourcing_round(sealed, python, Path(tmp) / f"es{i}.db", synchronous="NORMAL"))
            theirs_full.append(eventsourcing_round(sealed, python, Path(tmp) / f"esf{i}.db", synchronous="default"))
    print(f"load {os.getloadavg()[0]:.2f}; {args.steps} steps, {n_events} events, {n_events / len(steps):.1f} a step")

    def show(name: str, runs: list[Timed]) -> Timed:
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        print(f"{name:46s} {wall / len(steps) * 1e6:8.0f} us/step wall {cpu / len(steps) * 1e6:8.0f} us/step CPU")
        return wall, cpu

    mine = show("p2w-rt store (grammar + chain), 1 txn a step", ours)
    normal = show("eventsourcing SQLite recorder, NORMAL", theirs)
    shipped = show("eventsourcing SQLite recorder, FULL (default)", theirs_full)
    for name, base in (("as installed (FULL)", shipped), ("at the store's durability (NORMAL)", normal)):
        ratios = f"wall {mine[0] / base[0]:.2f}x, CPU {mine[1] / base[1]:.2f}x"
        print(f"store / eventsourcing {name}: {ratios} (<= 1.00x: as fast)")
    per_step = 1e6 / len(steps)
    parts = {
        "the grammar's checks": statistics.median(grammar),
        "sealing: canonical JSON + sha256 chain": statistics.median(seal for seal, _ in sealing),
    }
    print(f"where the store's {mine[1] * per_step:.0f} us/step CPU goes:")
    for name, cpu in parts.items():
        print(f"  {name:44s} {cpu * per_step:8.0f} us/step ({cpu / mine[1]:.0%})")
    hashing = statistics.median(h for _, h in sealing)
    print(f"  {'  of which sha256 of the canonical text':44s} {hashing * per_step:8.0f} us/step")
    rest = mine[1] - sum(parts.values())
    print(
        f"  {'the write itself (SQL, transaction, asyncio)':44s} {rest * per_step:8.0f} us/step, "
        f"{rest / normal[1]:.2f}x eventsourcing's whole insert at NORMAL"
    )


if __name__ == "__main__":
    main()
