"""Diffing two runs of the same tasks, possibly from two database files; see docs/design/diff.md."""

from replay.diff._align import Divergence, first_divergence, jaccard
from replay.diff._command import diff_refs
from replay.diff._diff import MetricDelta, RunDiff, TaskDiff, diff_runs
from replay.diff._refs import OpenRun, RunRef, open_runs, parse_ref
from replay.diff._render import metric_table, metrics_layout, render_diff, show_diff
from replay.diff._runs import (
    DEFAULT_JUDGE,
    EpisodeData,
    MissingJudgments,
    RunData,
    StepAction,
    episode_data,
    load_run_data,
)
from replay.diff._stats import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, mcnemar_exact, paired_bootstrap

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "BOOTSTRAP_SEED",
    "DEFAULT_JUDGE",
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
    "diff_refs",
    "diff_runs",
    "episode_data",
    "first_divergence",
    "jaccard",
    "load_run_data",
    "mcnemar_exact",
    "metric_table",
    "metrics_layout",
    "open_runs",
    "paired_bootstrap",
    "parse_ref",
    "render_diff",
    "show_diff",
]
