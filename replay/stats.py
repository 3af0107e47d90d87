"""Repeated runs of the same tasks: mean and standard deviation of each metric (the paper's Table 8 layout).

Each run's figures are means over the tasks every run scored (aligned as in ``diff``: task id,
level, and scheme), so runs that lost an episode are still compared on equal terms; the tasks
left out are listed per run. The deviation is the sample standard deviation across runs (n - 1).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from p2w_runtime.terminal import cell
from replay.diff import DEFAULT_JUDGE, METRICS, RunData, load_run_data, metrics_layout, open_runs, parse_ref, pct

TaskKey = tuple[str, int | None, str | None]


@dataclass(frozen=True, slots=True)
class RunFigures:
    run: RunData
    figures: dict[str, float | None]
    excluded: list[str]


@dataclass(frozen=True, slots=True)
class RunStats:
    judge_id: str
    runs: list[RunFigures]
    tasks: int
    """Tasks scored in every run: what each run's figures average over."""
    mean: dict[str, float | None]
    std: dict[str, float | None]

    def to_json(self) -> dict[str, Any]:
        return {
            "judge": self.judge_id,
            "tasks": self.tasks,
            "runs": [
                {
                    "run_id": r.run.info.run_id,
                    "label": r.run.label,
                    "source": r.run.source,
                    "metrics": {m: _round(r.figures[m]) for m in METRICS},
                    "excluded": r.excluded,
                }
                for r in self.runs
            ],
            "mean": {m: _round(self.mean[m]) for m in METRICS},
            "std": {m: _round(self.std[m]) for m in METRICS},
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


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
        means = {m: (sum(r[m] for r in rows) / len(rows) if rows else None) for m in METRICS}
        excluded = sorted({e.task_id for e in run.episodes} - {key[0] for key in common})
        figures.append(RunFigures(run, means, excluded))
    mean: dict[str, float | None] = {}
    std: dict[str, float | None] = {}
    for m in METRICS:
        values = [v for f in figures if (v := f.figures[m]) is not None]
        mean[m] = statistics.fmean(values) if values else None
        std[m] = statistics.stdev(values) if len(values) >= 2 else None
    return RunStats(runs[0].judge_id if runs else "", figures, len(common), mean, std)


def stats_table(stats: RunStats) -> Table:
    """One row per run, then the mean and the standard deviation, in percent (Table 8's mean ± std)."""
    title = f"{len(stats.runs)} runs, {stats.tasks} tasks scored in every run (judge {stats.judge_id})"
    table = metrics_layout(title, "run")
    for r in stats.runs:
        table.add_row(cell(r.run.source), *(pct(r.figures[m]) for m in METRICS))
    table.add_row("mean", *(pct(stats.mean[m]) for m in METRICS), style="bold")
    table.add_row("± std", *(pct(stats.std[m]) for m in METRICS), style="bold")
    return table


async def stats_command(
    default_db: Path | str, run_refs: Sequence[str], *, judge: str = DEFAULT_JUDGE, as_json: bool = False, out: Console
) -> RunStats:
    """Load every run (each possibly from another file), print the Table 8 layout or its JSON."""
    refs = [parse_ref(ref, default_db) for ref in run_refs]
    async with open_runs(refs) as opened:
        runs = [await load_run_data(o.store, o.info, judge, source=o.ref.text) for o in opened]
    stats = run_stats(runs)
    if as_json:
        out.print(json.dumps(stats.to_json(), ensure_ascii=False), markup=False, highlight=False, soft_wrap=True)
    else:
        out.print(stats_table(stats))
        for r in stats.runs:
            if r.excluded:
                left_out = f"{r.run.source}: left out (not scored in every run): {', '.join(r.excluded)}"
                out.print(cell(left_out, "yellow"))
    return stats
