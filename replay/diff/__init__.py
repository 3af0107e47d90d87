"""Diffing two runs of the same tasks, possibly from two database files; see docs/design/diff.md."""

from replay.diff._align import Divergence
from replay.diff._command import diff_refs
from replay.diff._diff import MetricDelta, RunDiff, TaskDiff, diff_runs
from replay.diff._refs import OpenRun, RunRef, open_runs, parse_ref
from replay.diff._runs import (
    DEFAULT_JUDGE,
    EpisodeData,
    MissingJudgments,
    RunData,
    StepAction,
    load_run_data,
)

__all__ = [
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
    "load_run_data",
    "open_runs",
    "parse_ref",
]
