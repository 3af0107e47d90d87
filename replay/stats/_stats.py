"""Repeated runs of the same tasks: mean and standard deviation of each metric (the paper's Table 8 layout).

Each run's figures are means over the tasks every run scored (aligned as in ``diff``: task id,
level, and scheme), so runs that lost an episode are still compared on equal terms; the tasks
left out are listed per run. The deviation is the sample standard deviation across runs (n - 1).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from p2w_rt.replay.diff import DEFAULT_JUDGE, RunData, load_run_data, open_runs, parse_ref
from p2w_rt.replay.metrics import METRICS, compared_scores, json_figure
from p2w_runtime.domain import check_named_once

TaskKey = tuple[str, int | None, str | None]


@dataclass(frozen=True, slots=True)
class RunFigures:
    run: RunData
    figures: dict[str, float | None]
    excluded: list[str]


@dataclass(frozen=True, slots=True)
class RunStats:
    judge_id: str
    judge_version: str | None
    """The version of the judge every run's figures are from (``replay.metrics.compared_scores``)."""
    runs: list[RunFigures]
    tasks: int
    """Tasks scored in every run: what each run's figures average over."""
    mean: dict[str, float | None]
    std: dict[str, float | None]

    def to_json(self) -> dict[str, Any]:
        return {
            "judge": self.judge_id,
            "judge_version": self.judge_version,
            "tasks": self.tasks,
            "runs": [
                {
                    "run_id": r.run.info.run_id,
                    "label": r.run.label,
                    "source": r.run.source,
                    "metrics": {m: json_figure(r.figures[m]) for m in METRICS},
                    "excluded": r.excluded,
                }
                for r in self.runs
            ],
            "mean": {m: json_figure(self.mean[m]) for m in METRICS},
            "std": {m: json_figure(self.std[m]) for m in METRICS},
        }


def _scored(run: RunData, with_scheme: bool) -> dict[TaskKey, dict[str, float]]:
    return {
        (e.task_id, e.level, e.scheme if with_scheme else None): e.scores for e in run.episodes if e.scores is not None
    }


def run_stats(runs: Sequence[RunData]) -> RunStats:
    with_scheme = len({frozenset(e.scheme for e in run.episodes) for run in runs}) == 1
    scored = [_scored(run, with_scheme) for run in runs]
    common = set.intersection(*(set(s) for s in scored)) if scored else set()
    figures: list[RunFigures] = []
    for run, by_task in zip(runs, scored, strict=True):
        rows = [by_task[key] for key in common]
        means = {m: (statistics.fmean(r[m] for r in rows) if rows else None) for m in METRICS}
        excluded = sorted({e.task_id for e in run.episodes} - {key[0] for key in common})
        figures.append(RunFigures(run, means, excluded))
    mean: dict[str, float | None] = {}
    std: dict[str, float | None] = {}
    for m in METRICS:
        values = [v for f in figures if (v := f.figures[m]) is not None]
        mean[m] = statistics.fmean(values) if values else None
        std[m] = statistics.stdev(values) if len(values) >= 2 else None
    judge, version = (runs[0].judge_id, runs[0].judge_version) if runs else ("", None)
    return RunStats(judge, version, figures, len(common), mean, std)


async def stats_of(default_db: Path | str, run_refs: Sequence[str], *, judge: str = DEFAULT_JUDGE) -> RunStats:
    """Load every run (each possibly from another file), scored with one version of the judge, and compute the
    Table 8 figures; a run named twice is refused (it would be two repeats with the same figures: a smaller
    deviation than the runs have)."""
    refs = [parse_ref(ref, default_db) for ref in run_refs]
    async with open_runs(refs) as opened:
        check_named_once(run_refs, [o.info for o in opened], [id(o.store) for o in opened])  # a file opens once
        compared = await compared_scores([(o.store, o.info.run_id) for o in opened], judge)
        runs = [
            await load_run_data(o.store, o.info, judge, o.ref.text, c) for o, c in zip(opened, compared, strict=True)
        ]
    return run_stats(runs)
