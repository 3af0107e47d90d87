"""Metric tables over judged runs: the paper's Table 5 layout and the ambiguity-level breakdown."""

from replay.metrics._aggregate import BadGrouping, MetricRow, aggregate
from replay.metrics._collect import EpisodeScore, collect_scores
from replay.metrics._command import metrics_command
from replay.metrics._plot import plot_levels

__all__ = [
    "BadGrouping",
    "EpisodeScore",
    "MetricRow",
    "aggregate",
    "collect_scores",
    "metrics_command",
    "plot_levels",
]
