"""Compare's data: the diff of two runs and each task's two trajectories side by side from where they part (the runs
are loaded, at one version of the judge, and aligned by ``replay.diff``, which never writes)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import zip_longest

from p2w_rt.replay.diff import RunData, RunDiff, StepAction, TaskDiff, load_run_data
from p2w_rt.replay.metrics import compared_scores
from p2w_runtime.domain import RunInfo
from p2w_runtime.store import EventStore


@dataclass(frozen=True, slots=True)
class SideBySide:
    """Two trajectories of one task from the first divergent step on; ``same`` actions before it are shared."""

    same: int
    rows: list[tuple[StepAction | None, StepAction | None]]


def side_by_side(task: TaskDiff) -> SideBySide:
    a, b = task.a.actions, task.b.actions
    if task.divergence is None:
        return SideBySide(len(a), [])
    same = 0
    while same < min(len(a), len(b)) and (a[same].action, a[same].url) == (b[same].action, b[same].url):
        same += 1
    return SideBySide(same, list(zip_longest(a[same:], b[same:])))


@dataclass(frozen=True, slots=True)
class Comparison:
    """Compare's data: the diff of two runs, each task side by side, and which run is in the viewer's own db."""

    diff: RunDiff
    sides: dict[str, SideBySide]
    """By task id: the two trajectories from where they part."""
    a_local: bool
    b_local: bool


def comparison(diff: RunDiff, a_local: bool, b_local: bool) -> Comparison:
    """The compare page of ``diff``: each of its tasks side by side."""
    return Comparison(diff, {t.task_id: side_by_side(t) for t in diff.tasks}, a_local, b_local)


async def compared_run_data(runs: Sequence[tuple[EventStore, RunInfo, str]], judge: str) -> list[RunData]:
    """Each of ``runs`` (store, run, how it was named) scored by ``judge`` at the one version ``p2w-rt diff`` uses for
    them all (``replay.metrics.compared_scores``): two runs judged by two versions are not compared as one judge."""
    compared = await compared_scores([(store, info.run_id) for store, info, _ in runs], judge)
    return [
        await load_run_data(store, info, judge, source, scores)
        for (store, info, source), scores in zip(runs, compared, strict=True)
    ]
