"""Metric tables over judged runs: the paper's Table 5 layout and the ambiguity-level breakdown; the one set
of metric names and number format (``_figures``) every command uses."""

from p2w_rt.replay.metrics._aggregate import MetricRow, aggregate
from p2w_rt.replay.metrics._collect import EpisodeScore, Outdated, collect_scores, outdated_of
from p2w_rt.replay.metrics._command import MetricsReport, metrics_report
from p2w_rt.replay.metrics._figures import (
    EPISODE_KEYS,
    METRICS,
    MISSING,
    TITLES,
    episode_figures,
    figure,
    json_figure,
    signed,
)
from p2w_rt.replay.metrics._plot import (
    PLOT_FORMATS,
    check_plot_path,
    level_series,
    level_ticks,
    plot_format,
    plot_levels,
)
from p2w_rt.replay.metrics._unjudged import Unjudged, failed_now, nothing_to_judge
from p2w_rt.replay.metrics._versions import (
    Compared,
    Versions,
    compared_scores,
    judge_label,
    newest_by_judge,
    other_versions,
    versioned_scores,
    versions_of,
)

__all__ = [
    "Compared",
    "EPISODE_KEYS",
    "METRICS",
    "MISSING",
    "TITLES",
    "EpisodeScore",
    "MetricRow",
    "MetricsReport",
    "Outdated",
    "PLOT_FORMATS",
    "Unjudged",
    "Versions",
    "aggregate",
    "check_plot_path",
    "collect_scores",
    "compared_scores",
    "episode_figures",
    "failed_now",
    "figure",
    "json_figure",
    "judge_label",
    "level_series",
    "level_ticks",
    "metrics_report",
    "newest_by_judge",
    "nothing_to_judge",
    "other_versions",
    "outdated_of",
    "plot_format",
    "plot_levels",
    "signed",
    "versioned_scores",
    "versions_of",
]
