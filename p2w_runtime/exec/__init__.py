"""Outside agents run as commands: re-executed from their recording (``rerun --exec``, docs/design/replay.md).

``rerun_exec`` starts the agent's command once per episode (``AgentCommand`` / ``run_command``, general enough
for any per-task command) against ``ReplayEndpoint``, which serves the recorded model calls and history
retrievals of one ``EpisodeReplay`` and compares what the agent did with the recording.
``rerun_browser_use`` re-executes a Browser-Use run in this process against the same endpoint, its requests
matched with their volatile parts normalised.
"""

# Browser-Use re-executed in process (rerun of a record --agent browser-use run)
from p2w_runtime.exec._browser_use import BrowserUseVolatile, browser_use_volatile, rerun_browser_use

# re-execution from a recording (rerun --exec); an outside agent forked (fork --exec)
from p2w_runtime.exec._episode_replay import EpisodeReplay, Volatile
from p2w_runtime.exec._fork_exec import ExecFork, fork_exec
from p2w_runtime.exec._live import LiveModel
from p2w_runtime.exec._replay_endpoint import ReplayEndpoint
from p2w_runtime.exec._rerun_exec import ExecEpisode, ExecReport, rerun_exec

# one process per task
from p2w_runtime.exec._spawn import AgentCommand, Finished, run_command

__all__ = [
    # Browser-Use re-executed in process
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
    # one process per task
    "AgentCommand",
    "Finished",
    "run_command",
]
