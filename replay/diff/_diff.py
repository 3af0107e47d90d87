"""Two runs of the same tasks, compared: metric deltas with paired statistics, flips, divergences.

Tasks are aligned by task id and level, and by scheme when both runs cover the same schemes
(comparing an on-demand run with a pre-execution run aligns across schemes). Each run is read
as its counted episodes, one per task (``p2w_runtime.store.counted``). Tasks in only one run, and tasks without a
usable judgment, are listed, never silently dropped; the figures are means over the tasks
scored in both runs, so every delta is paired.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p2w_rt.replay.diff._align import Divergence, first_divergence, jaccard
from p2w_rt.replay.diff._runs import EpisodeData, RunData, episode_data
from p2w_rt.replay.diff._stats import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, mcnemar_exact, paired_bootstrap
from p2w_rt.replay.metrics import METRICS, json_figure
from p2w_runtime.domain.trajectory import Trajectory

TaskKey = tuple[str, int | None, str | None]
LARGEST = 10
"""How many of the largest score changes the report lists."""


@dataclass(frozen=True, slots=True)
class MetricDelta:
    a: float | None
    b: float | None
    delta: float | None
    ci: tuple[float, float] | None

    def to_json(self) -> dict[str, Any]:
        return {
            "a": json_figure(self.a),
            "b": json_figure(self.b),
            "delta": json_figure(self.delta),
            "ci": None if self.ci is None else [json_figure(self.ci[0]), json_figure(self.ci[1])],
        }


@dataclass(frozen=True, slots=True)
class TaskDiff:
    task_id: str
    level: int | None
    scheme: str | None
    a: EpisodeData
    b: EpisodeData
    flip: str | None
    """``gained`` (B succeeds, A did not), ``lost``, or None."""
    divergence: Divergence | None
    retrieval_jaccard: float | None
    fork_step: int | None = None
    """K when one episode is a fork of the other at step K: the divergence was searched from K on."""

    @property
    def scored(self) -> bool:
        return self.a.scores is not None and self.b.scores is not None

    def deltas(self) -> dict[str, float]:
        if self.a.scores is None or self.b.scores is None:
            return {}
        return {m: self.b.scores[m] - self.a.scores[m] for m in METRICS}

    @property
    def change(self) -> float:
        """Size of the score change, for ranking: |ΔP_avg| + |ΔIntent| + |ΔSR|."""
        d = self.deltas()
        return abs(d.get("p_avg", 0.0)) + abs(d.get("intent", 0.0)) + abs(d.get("success_rate", 0.0))

    def to_json(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "level": self.level,
            "scheme": self.scheme,
            "a": _scores_json(self.a),
            "b": _scores_json(self.b),
            "flip": self.flip,
            "fork_step": self.fork_step,
            "first_divergence": None if self.divergence is None else self.divergence.to_json(),
            "websites_a": self.a.websites,
            "websites_b": self.b.websites,
            "retrieval_jaccard": json_figure(self.retrieval_jaccard),
        }


@dataclass(slots=True)
class RunDiff:
    a: RunData
    b: RunData
    metrics: dict[str, MetricDelta]
    paired: int
    tasks: list[TaskDiff]
    only_in_a: list[str]
    only_in_b: list[str]
    unscored: list[str]
    mcnemar_p: float
    largest: list[TaskDiff] = field(default_factory=list)

    @property
    def gained(self) -> list[TaskDiff]:
        return [t for t in self.tasks if t.flip == "gained"]

    @property
    def lost(self) -> list[TaskDiff]:
        return [t for t in self.tasks if t.flip == "lost"]

    def to_json(self) -> dict[str, Any]:
        return {
            "a": _run_json(self.a),
            "b": _run_json(self.b),
            "judge": self.a.judge_id,
            "judge_version": self.a.judge_version,
            "paired_tasks": self.paired,
            "metrics": {name: delta.to_json() for name, delta in self.metrics.items()},
            "tasks": [t.to_json() for t in self.tasks],
            "flips": {"gained": [t.task_id for t in self.gained], "lost": [t.task_id for t in self.lost]},
            "largest_changes": [
                {"task_id": t.task_id, "delta": {m: json_figure(d) for m, d in t.deltas().items()}}
                for t in self.largest
            ],
            "only_in_a": self.only_in_a,
            "only_in_b": self.only_in_b,
            "unscored": self.unscored,
            "mcnemar_p": json_figure(self.mcnemar_p),
        }


def _scores_json(e: EpisodeData) -> dict[str, Any] | None:
    if e.scores is None:
        return None
    out: dict[str, Any] = {m: json_figure(e.scores[m]) for m in METRICS if m != "success_rate"}
    out["success"] = e.success
    return out


def _run_json(run: RunData) -> dict[str, Any]:
    s = run.info.started
    return {
        "run_id": run.info.run_id,
        "label": run.label,
        "source": run.source,
        "agent": s.agent,
        "model": s.backbone_model,
        "scheme": s.scheme,
    }


def _by_task(run: RunData, with_scheme: bool) -> dict[TaskKey, EpisodeData]:
    return {(e.task_id, e.level, e.scheme if with_scheme else None): e for e in run.episodes}


def _flip(a: EpisodeData, b: EpisodeData) -> str | None:
    if a.success is None or b.success is None or a.success == b.success:
        return None
    return "gained" if b.success else "lost"


def _fork_step(a: EpisodeData, b: EpisodeData) -> int | None:
    """The step one episode was forked off the other at, if it was (either way round)."""
    for fork, source in ((b.fork, a), (a.fork, b)):
        if fork is not None and fork.source_stream == source.stream:
            return fork.at_step
    return None


def episode_divergence(a: Trajectory, b: Trajectory) -> Divergence | None:
    """Where two episodes of one task part ways, as ``diff_runs`` finds it for each task (from a fork's step on)."""
    ea, eb = episode_data(a, None, None), episode_data(b, None, None)
    return first_divergence(ea.actions, eb.actions, after_fork_step=_fork_step(ea, eb))


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def diff_runs(
    a: RunData, b: RunData, *, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED, largest: int = LARGEST
) -> RunDiff:
    with_scheme = {e.scheme for e in a.episodes} == {e.scheme for e in b.episodes}
    tasks_a, tasks_b = _by_task(a, with_scheme), _by_task(b, with_scheme)
    tasks: list[TaskDiff] = []
    for key, ea in tasks_a.items():
        eb = tasks_b.get(key)
        if eb is None:
            continue
        fork_step = _fork_step(ea, eb)
        divergence = first_divergence(ea.actions, eb.actions, after_fork_step=fork_step)
        overlap = jaccard(ea.entry_ids, eb.entry_ids)
        tasks.append(TaskDiff(key[0], key[1], ea.scheme, ea, eb, _flip(ea, eb), divergence, overlap, fork_step))
    scored = [t for t in tasks if t.scored]
    rows_a = [[t.a.scores[m] for m in METRICS] for t in scored if t.a.scores]
    rows_b = [[t.b.scores[m] for m in METRICS] for t in scored if t.b.scores]
    intervals = paired_bootstrap(rows_a, rows_b, resamples=resamples, seed=seed) if scored else [None] * len(METRICS)
    metrics: dict[str, MetricDelta] = {}
    for i, name in enumerate(METRICS):
        mean_a, mean_b = _mean([r[i] for r in rows_a]), _mean([r[i] for r in rows_b])
        delta = None if mean_a is None or mean_b is None else mean_b - mean_a
        metrics[name] = MetricDelta(mean_a, mean_b, delta, intervals[i])
    gained = sum(1 for t in tasks if t.flip == "gained")
    lost = sum(1 for t in tasks if t.flip == "lost")
    ranked = sorted((t for t in scored if t.change > 0), key=lambda t: (-t.change, t.task_id))
    return RunDiff(
        a=a,
        b=b,
        metrics=metrics,
        paired=len(scored),
        tasks=tasks,
        only_in_a=[key[0] for key in tasks_a if key not in tasks_b],
        only_in_b=[key[0] for key in tasks_b if key not in tasks_a],
        unscored=[t.task_id for t in tasks if not t.scored],
        mcnemar_p=mcnemar_exact(gained, lost),
        largest=ranked[:largest],
    )
