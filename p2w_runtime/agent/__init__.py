"""The personalized web agent: Persona2Web's planner / retriever / generator on a text-observation browser agent.

Everything an episode sees, asks, retrieves, reasons and does is appended to the store step by step.
"""

from p2w_runtime.agent._config import AgentConfig
from p2w_runtime.agent._environment import Environment, EpisodeTab, SeamDiverged
from p2w_runtime.agent._episode import Episode, EpisodeOutcome
from p2w_runtime.agent._record import RecordRequest, RecordSummary, record
from p2w_runtime.agent._run import RunProgress
from p2w_runtime.agent.prompts import GENERATOR_MARKER, PLANNER_MARKER, PRE_EXECUTION_MARKER, REWRITER_MARKER

__all__ = [
    "GENERATOR_MARKER",
    "PLANNER_MARKER",
    "PRE_EXECUTION_MARKER",
    "REWRITER_MARKER",
    "AgentConfig",
    "Environment",
    "EpisodeTab",
    "SeamDiverged",
    "Episode",
    "EpisodeOutcome",
    "RecordRequest",
    "RecordSummary",
    "RunProgress",
    "record",
]
