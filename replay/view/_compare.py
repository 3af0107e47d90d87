"""Compare: two runs as ``replay.diff`` aligns them, read without judging, and each task's two trajectories
side by side from where they part."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import zip_longest

from p2w_runtime.store import Recorder, RunInfo
from replay.diff import METRICS, RunData, StepAction, TaskDiff, episode_data
from replay.judging import current_judgments
from replay.trajectory import load_trajectories

EPISODE_FIGURES: dict[str, str] = {
    "p_web": "p_web",
    "p_pref": "p_pref",
    "p_avg": "p_avg",
    "intent": "intent",
    "success_rate": "success",
}
"""``replay.diff.METRICS`` name -> judgment metric, as ``replay.diff`` reads them."""


class NotJudged(LookupError):
    """A run has no current judgments by the judge a comparison needs; the viewer will not make them."""


async def judged_run_data(store: Recorder, info: RunInfo, judge_id: str, source: str) -> RunData:
    """What ``diff_runs`` needs, read-only: ``replay.diff.load_run_data`` would judge an unjudged run first,
    but a viewer must not write to the store, so an unjudged run is reported instead."""
    judged = await current_judgments(store, info.run_id, judge_id)
    if not judged and info.episodes:
        raise NotJudged(
            f"run {info.label!r} ({info.run_id}) has no {judge_id} judgments; "
            f"judge it first: p2w-rt replay {info.label} --judge {judge_id}"
        )
    episodes = []
    async for t in load_trajectories(store, info.run_id):
        record = judged.get((t.stream, judge_id))
        metrics = record.judgment.metrics if record else {}
        complete = all(m in metrics for m in EPISODE_FIGURES.values())
        scores = {name: metrics[EPISODE_FIGURES[name]] for name in METRICS} if complete else None
        episodes.append(episode_data(t, scores, info.started.scheme))
    return RunData(info, source, judge_id, episodes)


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
