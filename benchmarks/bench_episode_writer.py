"""What the episode grammar costs on the agent's write path: ``EpisodeWriter.add`` against staging the same
events unchecked (what the agent's ``EpisodeLog`` did before the grammar), and against the SQLite append
that stores them.

One episode of N steps as the agent writes them: an observation, the planner's ``llm.call`` and rationale,
an action, and every third step an on-demand history access (query -> retrieval -> generator call -> answer).
The payloads are built once beforehand; only staging (and, for the third figure, storing) is timed.

Usage: python benchmarks/bench_episode_writer.py [--steps 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from p2w_rt.schemas import (
    Action,
    AnyPayload,
    HistoryQuery,
    HistoryRetrieval,
    LlmCall,
    NewEvent,
    Observation,
    ParsedAction,
    Rationale,
)
from p2w_runtime.domain import EpisodeWriter, episode_started
from p2w_runtime.store import open_store
from p2w_runtime.testing.episodes import SketchTask

TASK = SketchTask("Ann_Lee_A1", "find the usual chinos", "https://www.bing.com/", 1, None)
STREAM = "bench/Ann_Lee_A1"
Planned = tuple[AnyPayload, int | None]
"""A payload and the index of the planned event that causes it."""


def plan(steps: int) -> list[Planned]:
    planned: list[Planned] = [(episode_started(TASK, episode_id=TASK.task_id, scheme="on-demand"), None)]
    for step in range(1, steps + 1):
        planned.append((Observation(step=step, url=f"https://shop.example/{step}", title=f"page {step}"), None))
        call = LlmCall(role="planner", model="m", step=step, messages=[], latency_s=0.5, fingerprint="f", ordinal=0)
        planned.append((call, None))
        planned.append((Rationale(step=step, source="planner", text=f"step {step}: look for the chinos"), None))
        if step % 3 == 0:
            parsed = ParsedAction(name="memory_access", args=["which size"])
            planned.append((Action(step=step, raw=parsed.render(), parsed=parsed, status="executed"), None))
            planned.append((HistoryQuery(step=step, phase="on-demand", query="which size"), None))
            retrieval = HistoryRetrieval(
                step=step, query="which size", model_id="m", index_hash="0" * 64, k=20, threshold=0.5, hits=[]
            )
            planned.append((retrieval, len(planned) - 1))
            planned.append((Rationale(step=step, source="generator", text="32x32"), len(planned) - 1))
        else:
            parsed = ParsedAction(name="click", args=[str(step)])
            planned.append((Action(step=step, raw=parsed.render(), parsed=parsed, status="executed"), None))
    return planned


def unchecked(planned: list[Planned]) -> tuple[float, list[NewEvent]]:
    """The baseline: NewEvent built and listed, no grammar (the agent's staging before the writer)."""
    started = time.perf_counter()
    events: list[NewEvent] = []
    for payload, cause in planned:
        causation = events[cause].event_id if cause is not None else None
        events.append(NewEvent(stream=STREAM, payload=payload, causation_id=causation))
    return time.perf_counter() - started, events


def checked(planned: list[Planned]) -> float:
    started = time.perf_counter()
    writer = EpisodeWriter(STREAM)
    ids: list[str] = []
    for payload, cause in planned:
        ids.append(writer.add(payload, ids[cause] if cause is not None else None).event_id)
    return time.perf_counter() - started


async def stored(events: list[NewEvent]) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        async with open_store(Path(tmp) / "bench.db") as store:
            started = time.perf_counter()
            for i in range(0, len(events), 8):  # about one step per transaction, as the agent flushes
                await store.append(events[i : i + 8])
            return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=20_000)
    args = parser.parse_args()
    planned = plan(args.steps)
    base, events = min((unchecked(planned) for _ in range(3)), key=lambda r: r[0])
    writer = min(checked(planned) for _ in range(3))
    store = asyncio.run(stored(events))
    n = len(planned)
    print(f"{n} events ({args.steps} steps)")
    print(f"staged unchecked (baseline): {base / n * 1e6:6.2f} us/event")
    print(f"EpisodeWriter.add (grammar): {writer / n * 1e6:6.2f} us/event  ratio {writer / base:.2f}x")
    print(f"grammar's own cost         : {(writer - base) / n * 1e6:6.2f} us/event")
    share = (writer - base) / store
    print(f"SQLite append (per step)   : {store / n * 1e6:6.2f} us/event  grammar = {share:.1%} of it")


if __name__ == "__main__":
    main()
