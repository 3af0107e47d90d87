"""Diffing two runs of the same tasks, possibly from two database files; see docs/design/diff.md."""

from replay.diff._align import Divergence
from replay.diff._command import diff_command
from replay.diff._diff import MetricDelta, RunDiff, TaskDiff, diff_runs
from replay.diff._refs import OpenRun, RunRef, open_runs, parse_ref
from replay.diff._report import METRIC_HEADERS, metrics_layout, pct
from replay.diff._runs import (
    DEFAULT_JUDGE,
    METRICS,
    EpisodeData,
    MissingJudgments,
    RunData,
    StepAction,
    load_run_data,
)

__all__ = [
    "DEFAULT_JUDGE",
    "METRICS",
    "METRIC_HEADERS",
    "Divergence",
    "EpisodeData",
    "MetricDelta",
    "MissingJudgments",
    "OpenRun",
    "RunData",
    "RunDiff",
    "RunRef",
    "StepAction",
    "TaskDiff",
    "diff_command",
    "diff_runs",
    "load_run_data",
    "metrics_layout",
    "open_runs",
    "parse_ref",
    "pct",
]
