"""What ``p2w-rt metrics`` does, so that cli.py only parses options and calls ``metrics_command``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from p2w_runtime.store import Recorder, find_run
from p2w_runtime.terminal import cell
from replay.judges import JUDGES, UnknownJudge
from replay.metrics._aggregate import DEFAULT_BY, aggregate, check_by, levels_of
from replay.metrics._collect import collect_scores
from replay.metrics._plot import check_plot_path, plot_levels
from replay.metrics._render import csv_text, json_lines, markdown, rich_table


async def metrics_command(
    store: Recorder,
    run_refs: Sequence[str],
    *,
    judge: str | None,
    by: Sequence[str] | None,
    fmt: str,
    plot: Path | None,
    out: Console,
    err: Console,
) -> None:
    """Print the Table 5 layout for the runs, the level breakdown when several levels are present, and the plot.

    Every problem the user can fix (an unknown judge, a plot path that cannot be written) is raised before anything
    is printed or written; the plot is written before the tables, so a failed plot prints no half result.
    """
    if judge is not None and judge not in JUDGES:
        raise UnknownJudge(f"--judge: unknown judge {judge!r}; known judges: {', '.join(JUDGES)}")
    if plot:
        check_plot_path(plot)
    runs = [await find_run(store, ref) for ref in run_refs]
    group_by = check_by(by) if by else DEFAULT_BY
    scores = await collect_scores(store, runs, judge_id=judge)
    rows = aggregate(scores, group_by)
    level_rows = []
    if (len(levels_of(scores)) > 1 or plot) and "level" not in group_by:
        level_rows = aggregate(scores, (*group_by, "level"))
    if plot:
        plot_levels(level_rows or rows, plot)
    level_figures = (("success", "SR"), ("p_avg", "P_avg"))
    if fmt == "table":
        out.print(rich_table(rows, "Table 5 layout: means over judged episodes"))
        if level_rows:
            out.print(rich_table(level_rows, "By ambiguity level (0 = explicit, 2 = most ambiguous)", level_figures))
    elif fmt == "md":
        out.print(markdown(rows), markup=False, highlight=False, soft_wrap=True)
        if level_rows:
            out.print("\n" + markdown(level_rows, level_figures), markup=False, highlight=False, soft_wrap=True)
    elif fmt == "csv":  # one CSV, one header: the level breakdown is its own table (--by ...,level)
        out.print(csv_text(rows).rstrip("\n"), markup=False, highlight=False, soft_wrap=True)
        if len(levels_of(scores)) > 1 and "level" not in group_by:
            err.print("CSV holds the main table only; add level to --by for the breakdown by level", highlight=False)
    else:
        text = "\n".join(filter(None, (json_lines(rows, "main"), json_lines(level_rows, "by_level"))))
        out.print(text, markup=False, highlight=False, soft_wrap=True)
    if not any(s.metrics for s in scores):
        err.print(cell(f"no judgments yet for {', '.join(run_refs)}: run p2w-rt replay RUN --judge ID first"))
    if plot:
        err.print(cell(f"plot written to {plot}"))
