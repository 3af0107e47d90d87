"""Other agents recorded through the recording API (``p2w_runtime.recording``): each in its own subpackage, each
importing its agent library only when used, so p2w-rt runs without them; and the table of agents ``record --agent``
takes (``AgentIntegration``, ``register_agent``), which loads none of them."""

from p2w_runtime.integrations._agents import AgentIntegration, RecordAgent, UnknownAgent, agent, agents, register_agent

__all__ = ["AgentIntegration", "RecordAgent", "UnknownAgent", "agent", "agents", "register_agent"]
