"""Diffing two runs of the same tasks, possibly from two database files; see docs/design/diff.md."""

from p2w_rt.replay.diff._align import Divergence
from p2w_rt.replay.diff._command import diff_refs
from p2w_rt.replay.diff._diff import RunDiff, TaskDiff, diff_runs, episode_divergence
from p2w_rt.replay.diff._refs import open_runs, parse_ref
from p2w_rt.replay.diff._runs import DEFAULT_JUDGE, MissingJudgments, RunData, StepAction, load_run_data

__all__ = [
    "DEFAULT_JUDGE",
    "Divergence",
    "MissingJudgments",
    "RunData",
    "RunDiff",
    "StepAction",
    "TaskDiff",
    "diff_refs",
    "diff_runs",
    "episode_divergence",
    "load_run_data",
    "open_runs",
    "parse_ref",
]
