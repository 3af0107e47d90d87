"""Running judges over recorded runs: caching, appending judgment events, estimates, presentation."""

from replay.derived import CacheKey, LlmFactory, latest_by_key
from replay.judging._command import ReplayOptions, replay_command
from replay.judging._estimate import JudgeEstimate, estimate_replay
from replay.judging._format import format_judgment, judgment_json
from replay.judging._records import (
    JudgmentRecord,
    current_judgments,
    episode_judgments,
    judgment_stream,
    read_judgments,
)
from replay.judging._runner import JudgeOutcome, ReplayAborted, ReplaySummary, cache_key, replay_run, to_judgment

__all__ = [
    "CacheKey",
    "JudgeEstimate",
    "JudgeOutcome",
    "JudgmentRecord",
    "LlmFactory",
    "ReplayAborted",
    "ReplayOptions",
    "ReplaySummary",
    "cache_key",
    "current_judgments",
    "episode_judgments",
    "estimate_replay",
    "format_judgment",
    "judgment_json",
    "judgment_stream",
    "latest_by_key",
    "read_judgments",
    "replay_command",
    "replay_run",
    "to_judgment",
]
