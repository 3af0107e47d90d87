"""Outside agents, in any language, run as processes: recorded (``record --exec``) with no change to their code.

``record_exec`` starts the agent's command once per task with a recording proxy for its model calls
(``RecordProxy``), a Chromium it attaches to over CDP and p2w-rt observes (``ObservedChromium``), and a receiver for
its OpenTelemetry spans (``SpanSink``); docs/design/exec.md.
"""

# record --exec (issue 35)
from p2w_runtime.exec._agent_process import AgentExit, answer_of, run_agent
from p2w_runtime.exec._observer import ObservedChromium
from p2w_runtime.exec._record_exec import agent_name, record_exec
from p2w_runtime.exec._record_proxy import ProxiedEpisode, RecordProxy
from p2w_runtime.exec._spans import SpanSink, attributes, spans_of, tool_args

__all__ = [
    # record --exec (issue 35)
    "AgentExit",
    "ObservedChromium",
    "ProxiedEpisode",
    "RecordProxy",
    "SpanSink",
    "agent_name",
    "answer_of",
    "attributes",
    "record_exec",
    "run_agent",
    "spans_of",
    "tool_args",
]
