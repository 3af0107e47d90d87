"""Stores of one-task runs (task T1, "Find chinos") in the states a command's hints tell apart: no episode, an
attempt that never finished, an episode finished with or without ground truth."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from p2w_rt.schemas import GroundTruth, uuid7
from p2w_runtime.store import open_store
from p2w_runtime.testing.episodes import EpisodeBuilder, run_finished, run_started

TRUTH = GroundTruth(website="kohls.com", websites=["kohls.com"], preferences=["32x32"])

Run = tuple[str, GroundTruth | None, bool]
"""A run's label, its task's ground truth, and whether its one episode finished."""


def chinos_episode(run_id: str, truth: GroundTruth | None, *, finished: bool = True) -> EpisodeBuilder:
    b = EpisodeBuilder(run_id, "T1", query="Find chinos", ground_truth=truth)
    b.observation(1, "https://www.kohls.com/search?q=chinos+32x32")
    if finished:
        b.action(1, "stop", "Chinos 32x32 on kohls.com")
        b.finish("answered", "Chinos 32x32 on kohls.com", steps=1)
    return b


def build_runs(db: Path, runs: Sequence[Run], *, empty: str | None = None, agent: str = "p2w-rt") -> Path:
    """``db`` holding ``runs`` (recorded by ``agent``), and a run labelled ``empty`` with no episode when given."""

    async def build() -> None:
        async with open_store(db) as store:
            if empty is not None:
                run_id = uuid7()
                await store.append([run_started(run_id, empty, agent=agent), run_finished(run_id, 0)])
            for label, truth, finished in runs:
                run_id = uuid7()
                events = chinos_episode(run_id, truth, finished=finished).events
                closed = [run_finished(run_id, 1)] if finished else []
                await store.append([run_started(run_id, label, agent=agent), *events, *closed])

    asyncio.run(build())
    return db
