"""The personalized web agent: Persona2Web's planner / retriever / generator on a text-observation browser agent.

Everything an episode sees, asks, retrieves, reasons and does is appended to the store step by step.
"""

from p2w_runtime.agent._config import AgentConfig
from p2w_runtime.agent._environment import SeamDiverged
from p2w_runtime.agent._episode import Episode, EpisodeOutcome
from p2w_runtime.agent._record import (
    ROLE_PARAMS,
    RecordSummary,
    SiteHosting,
    StartsAt,
    hosted_browser,
    record,
    select_tasks,
)
from p2w_runtime.agent._replies import parse_generator
from p2w_runtime.agent._request import RecordRequest
from p2w_runtime.agent._resume import (
    COMMAND_DIGEST,
    check_resume_options,
    selection_config,
)
from p2w_runtime.agent._run import AGENT_NAME, RunProgress
from p2w_runtime.agent._worker import check_joinable, finish_run, work

__all__ = [
    "AGENT_NAME",
    "COMMAND_DIGEST",
    "ROLE_PARAMS",
    "AgentConfig",
    "SeamDiverged",
    "Episode",
    "EpisodeOutcome",
    "RecordRequest",
    "RecordSummary",
    "RunProgress",
    "SiteHosting",
    "StartsAt",
    "check_joinable",
    "check_resume_options",
    "finish_run",
    "hosted_browser",
    "parse_generator",
    "record",
    "select_tasks",
    "selection_config",
    "work",
]
