"""Outside agents, in any language, run as processes: recorded with no change to their code (``record --exec``,
docs/design/exec.md) and re-executed from their recording (``rerun --exec``, docs/design/replay.md).

Both start the agent's command once per task (``run_agent``). Recording gives it a recording proxy for its model
calls (``RecordProxy``), a Chromium it attaches to over CDP and p2w-rt observes (``ObservedChromium``) and a
receiver for its OpenTelemetry spans (``SpanSink``); re-execution gives it ``ReplayEndpoint``, which serves the
recorded model calls and history retrievals of one ``EpisodeReplay`` and compares what the agent did with them
(``fork_exec`` continues the agent live after a step). ``rerun_in_process`` re-executes an agent integration's run
in this process against the same endpoint, the agent's recording code run in the recording API's replay mode:
Browser-Use's (``rerun_browser_use``, its requests matched with their volatile parts normalised) and any installed
package's agent's.
"""

# one process per task
from p2w_runtime.exec._agent_process import AgentExit, answer_of, run_agent

# an agent integration's run re-executed in process (rerun RUN): Browser-Use's, a plugin's
from p2w_runtime.exec._browser_use import BrowserUseVolatile, browser_use_volatile, rerun_browser_use

# re-execution from a recording (rerun --exec); an outside agent forked (fork --exec)
from p2w_runtime.exec._episode_replay import EpisodeReplay, Volatile
from p2w_runtime.exec._fork_exec import ExecFork, fork_exec
from p2w_runtime.exec._in_process import InProcessEpisode, rerun_in_process
from p2w_runtime.exec._live import LiveModel

# record --exec
from p2w_runtime.exec._observer import ObservedChromium
from p2w_runtime.exec._record_exec import agent_name, record_exec
from p2w_runtime.exec._record_proxy import ProxiedEpisode, RecordProxy
from p2w_runtime.exec._replay_endpoint import ReplayEndpoint
from p2w_runtime.exec._rerun_exec import ExecEpisode, ExecReport, rerun_exec
from p2w_runtime.exec._spans import SpanSink, attributes, spans_of, tool_args

__all__ = [
    # one process per task
    "AgentExit",
    "answer_of",
    "run_agent",
    # record --exec
    "ObservedChromium",
    "ProxiedEpisode",
    "RecordProxy",
    "SpanSink",
    "agent_name",
    "attributes",
    "record_exec",
    "spans_of",
    "tool_args",
    # an agent integration's run re-executed in process: Browser-Use's, a plugin's
    "InProcessEpisode",
    "rerun_in_process",
    "BrowserUseVolatile",
    "browser_use_volatile",
    "rerun_browser_use",
    # an outside agent forked (fork --exec)
    "ExecFork",
    "LiveModel",
    "fork_exec",
    # re-execution from a recording (rerun --exec)
    "EpisodeReplay",
    "Volatile",
    "ExecEpisode",
    "ExecReport",
    "ReplayEndpoint",
    "rerun_exec",
]
