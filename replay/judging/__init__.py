"""Running judges over recorded runs: the judge family's pass, its stream and estimates (``p2w_cli.render.judging``
prints them)."""

from replay.derived import CacheKey, LlmFactory, latest_by_key
from replay.judging._command import ReplayOptions, estimate_run, judge_run
from replay.judging._estimate import JudgeEstimate, estimate_replay
from replay.judging._records import (
    JudgmentRecord,
    current_judgments,
    episode_judgments,
    judgment_stream,
    read_judgments,
)
from replay.judging._runner import JUDGING, JudgeOutcome, ReplayAborted, ReplaySummary, replay_run

__all__ = [
    "JUDGING",
    "CacheKey",
    "JudgeEstimate",
    "JudgeOutcome",
    "JudgmentRecord",
    "LlmFactory",
    "ReplayAborted",
    "ReplayOptions",
    "ReplaySummary",
    "current_judgments",
    "episode_judgments",
    "estimate_replay",
    "estimate_run",
    "judgment_stream",
    "latest_by_key",
    "read_judgments",
    "judge_run",
    "replay_run",
]
