"""Repeated runs for people: one row per run, then the mean and the standard deviation (Table 8's mean ± std),
figures as every table prints them (``replay.metrics.figure``)."""

from __future__ import annotations

import json

from rich.console import Console
from rich.table import Table

from p2w_cli.render.diff import metrics_layout
from p2w_cli.render.terminal import cell
from p2w_cli.render.words import counted
from p2w_rt.replay.metrics import METRICS, figure, judge_label
from p2w_rt.replay.stats import RunStats


def stats_table(stats: RunStats) -> Table:
    judge = judge_label(stats.judge_id, stats.judge_version)
    title = f"{counted(len(stats.runs), 'run')}, {counted(stats.tasks, 'task')} scored in every run (judge {judge})"
    table = metrics_layout(title, "run")
    for r in stats.runs:
        table.add_row(cell(r.run.source), *(figure(r.figures[m]) for m in METRICS))
    table.add_row("mean", *(figure(stats.mean[m]) for m in METRICS), style="bold")
    table.add_row("± std", *(figure(stats.std[m]) for m in METRICS), style="bold")
    return table


def show_stats(stats: RunStats, out: Console, *, as_json: bool = False) -> None:
    if as_json:
        out.print(json.dumps(stats.to_json(), ensure_ascii=False), markup=False, highlight=False, soft_wrap=True)
        return
    out.print(stats_table(stats))
    for r in stats.runs:
        if r.excluded:
            left_out = f"{r.run.source}: left out (not scored in every run): {', '.join(r.excluded)}"
            out.print(cell(left_out, "yellow"))
