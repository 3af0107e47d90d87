"""Metric tables over judged runs: the paper's Table 5 layout and the ambiguity-level breakdown; the one set
of metric names and number format (``_figures``) every command uses."""

from p2w_rt.replay.metrics._aggregate import MetricRow, aggregate
from p2w_rt.replay.metrics._collect import EpisodeScore, collect_scores
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
from p2w_rt.replay.metrics._plot import level_series, level_ticks, plot_levels

__all__ = [
    "EPISODE_KEYS",
    "METRICS",
    "MISSING",
    "TITLES",
    "EpisodeScore",
    "MetricRow",
    "MetricsReport",
    "aggregate",
    "collect_scores",
    "episode_figures",
    "figure",
    "json_figure",
    "level_series",
    "level_ticks",
    "metrics_report",
    "plot_levels",
    "signed",
]
