"""Re-execution of the agent over recorded episodes (``p2w-rt rerun``): Temporal-style replay against history.

The agent's own loop runs with the recording as its environment and its LLM; the first decision that differs
from the recorded one is reported (docs/design/rerun.md).
"""

from p2w_runtime.rerun._compare import first_mismatch
from p2w_runtime.rerun._fork import ForkRequest, ForkSummary, fork
from p2w_runtime.rerun._fork_run import ForkTarget, close_ended, holding_fork
from p2w_runtime.rerun._har import har_has_bodies, recorded_har
from p2w_runtime.rerun._llm import prompt_changed, recorded_completion
from p2w_runtime.rerun._mismatch import Mismatch, MismatchKind, ReplayedEpisode
from p2w_runtime.rerun._recorded import RecordedEpisode, load_episode
from p2w_runtime.rerun._rerun import EpisodeRerun, RerunOptions, RerunReport, recorded_run, rerun, select_episodes

__all__ = [
    "EpisodeRerun",
    "ForkRequest",
    "ForkSummary",
    "fork",
    "har_has_bodies",
    "Mismatch",
    "MismatchKind",
    "RerunOptions",
    "RerunReport",
    "rerun",
    # re-executing another agent from its recording (p2w_runtime.exec)
    "ForkTarget",
    "RecordedEpisode",
    "ReplayedEpisode",
    "close_ended",
    "first_mismatch",
    "holding_fork",
    "load_episode",
    "prompt_changed",
    "recorded_completion",
    "recorded_har",
    "recorded_run",
    "select_episodes",
]
