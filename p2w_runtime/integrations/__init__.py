"""Other agents recorded through the recording API (``p2w_runtime.recording``): each in its own subpackage, each
importing its agent library only when used, so p2w-rt runs without them; and the table of agents ``record --agent``
takes and ``rerun`` re-executes by (``AgentIntegration``, ``register_agent``, ``rerun_recorded``), which loads none
of them."""

from p2w_runtime.integrations._agents import (
    AgentIntegration,
    RecordAgent,
    RerunAgent,
    RerunRefused,
    UnknownAgent,
    agent,
    agents,
    register_agent,
)
from p2w_runtime.integrations._rerun import rerun_recorded

__all__ = [
    "AgentIntegration",
    "RecordAgent",
    "RerunAgent",
    "RerunRefused",
    "UnknownAgent",
    "agent",
    "agents",
    "register_agent",
    "rerun_recorded",
]
