"""What ``p2w-rt metrics`` asks of the library: the rows of the Table 5 layout and the level breakdown (data)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from p2w_rt.replay.metrics._aggregate import DEFAULT_BY, MetricRow, aggregate, check_by, levels_of
from p2w_rt.replay.metrics._collect import EpisodeScore, Outdated, collect_scores, outdated_of
from p2w_rt.replay.metrics._plot import check_plot_path, plot_levels
from p2w_rt.replay.metrics._unjudged import Unjudged, nothing_to_judge, unjudged_of
from p2w_runtime.domain import find_runs
from p2w_runtime.errors import UserError
from p2w_runtime.store import EventStore


class NothingToJudge(UserError):
    """No run named has a finished episode: a table of them holds nothing, and judging them would judge nothing."""


@dataclass(frozen=True, slots=True)
class MetricsReport:
    run_refs: tuple[str, ...]
    group_by: tuple[str, ...]
    scores: list[EpisodeScore]
    rows: list[MetricRow]
    level_rows: list[MetricRow]
    """By ambiguity level too, when several levels are present (or a plot is asked for) and ``level`` is not
    already a column; else empty."""
    plot: Path | None
    empty: tuple[str, ...] = ()
    """What each run without a finished episode has instead ("run A has no episodes"): no row, nothing to judge."""
    unjudged: tuple[Unjudged, ...] = ()

    @property
    def several_levels(self) -> bool:
        return len(levels_of(self.scores)) > 1

    @property
    def outdated(self) -> list[Outdated]:
        return outdated_of(self.scores)


async def metrics_report(
    store: EventStore, run_refs: Sequence[str], *, judge: str | None, by: Sequence[str] | None, plot: Path | None
) -> MetricsReport:
    """The Table 5 rows for the runs, the level breakdown, and the plot written to ``plot``.

    Every problem the user can fix (an unknown judge, a plot path that cannot be written) is raised before anything
    is written; the plot is written before any table is shown, so a failed plot shows no half result.
    """
    if judge is not None:  # an unknown id is a UserError naming the known ones
        from p2w_rt.replay.derived import family

        family("judge").check(judge)
    if plot:
        check_plot_path(plot)
    runs = await find_runs(store, run_refs)
    group_by = check_by(by) if by else DEFAULT_BY
    scores = await collect_scores(store, runs, judge_id=judge)
    empty = [
        what
        for info in runs
        if not any(s.run_id == info.run_id for s in scores) and (what := await nothing_to_judge(store, info))
    ]
    if runs and len(empty) == len(runs):
        raise NothingToJudge(f"{'; '.join(empty)}: nothing was judged and there is nothing to judge")
    rows = aggregate(scores, group_by)
    level_rows: list[MetricRow] = []
    if (len(levels_of(scores)) > 1 or plot) and "level" not in group_by:
        shown = tuple(name for name, _ in rows[0].group) if rows else group_by  # the judge column, if any, first
        level_rows = aggregate(scores, (*shown, "level"))
    if plot:
        plot_levels(level_rows or rows, plot)
    unjudged = await unjudged_of(store, runs, scores, judge)
    return MetricsReport(tuple(run_refs), group_by, scores, rows, level_rows, plot, tuple(empty), tuple(unjudged))
