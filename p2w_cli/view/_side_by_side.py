"""Compare: each task's two trajectories side by side from where they part (the runs are loaded and aligned by
``replay.diff``, which never writes)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import zip_longest

from p2w_rt.replay.diff import StepAction, TaskDiff


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
