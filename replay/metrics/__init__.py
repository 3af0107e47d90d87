"""Metric tables over judged runs: the paper's Table 5 layout and the ambiguity-level breakdown."""

from replay.metrics._aggregate import DEFAULT_BY, BadGrouping, MetricRow, aggregate, check_by, levels_of
from replay.metrics._collect import FIGURES, GROUP_KEYS, EpisodeScore, collect_scores
from replay.metrics._command import metrics_command
from replay.metrics._plot import plot_levels
from replay.metrics._render import COLUMNS, FORMATS, csv_text, json_lines, markdown, rich_table

__all__ = [
    "COLUMNS",
    "DEFAULT_BY",
    "FIGURES",
    "FORMATS",
    "GROUP_KEYS",
    "BadGrouping",
    "EpisodeScore",
    "MetricRow",
    "aggregate",
    "check_by",
    "collect_scores",
    "csv_text",
    "json_lines",
    "levels_of",
    "markdown",
    "metrics_command",
    "plot_levels",
    "rich_table",
]
