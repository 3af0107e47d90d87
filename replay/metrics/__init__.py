"""Metric tables over judged runs: the paper's Table 5 layout and the ambiguity-level breakdown; the one set
of metric names and number format (``_figures``) every command uses."""

from replay.metrics._aggregate import DEFAULT_BY, BadGrouping, MetricRow, aggregate, levels_of
from replay.metrics._collect import GROUP_KEYS, EpisodeScore, collect_scores
from replay.metrics._command import MetricsReport, metrics_report
from replay.metrics._figures import EPISODE_KEYS, METRICS, TITLES, episode_figures, figure, json_figure, signed
from replay.metrics._plot import plot_levels
from replay.metrics._render import COLUMNS, FORMATS, csv_text, json_lines, markdown, rich_table, show_metrics

__all__ = [
    "COLUMNS",
    "DEFAULT_BY",
    "EPISODE_KEYS",
    "FORMATS",
    "GROUP_KEYS",
    "METRICS",
    "TITLES",
    "BadGrouping",
    "EpisodeScore",
    "MetricRow",
    "MetricsReport",
    "aggregate",
    "collect_scores",
    "csv_text",
    "episode_figures",
    "figure",
    "json_figure",
    "json_lines",
    "levels_of",
    "markdown",
    "metrics_report",
    "plot_levels",
    "rich_table",
    "show_metrics",
    "signed",
]
