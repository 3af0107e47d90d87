"""Outside agents run as commands: re-executed from their recording (``rerun --exec``, docs/design/replay.md).

``rerun_exec`` starts the agent's command once per episode (``AgentCommand`` / ``run_command``, general enough
for any per-task command) against ``ReplayEndpoint``, which serves the recorded model calls and history
retrievals of one ``EpisodeReplay`` and compares what the agent did with the recording.
"""

# re-execution from a recording (rerun --exec)
from p2w_runtime.exec._episode_replay import EpisodeReplay
from p2w_runtime.exec._replay_endpoint import ReplayEndpoint
from p2w_runtime.exec._rerun_exec import ExecEpisode, ExecReport, rerun_exec

# one process per task
from p2w_runtime.exec._spawn import AgentCommand, Finished, run_command

__all__ = [
    # re-execution from a recording (rerun --exec)
    "EpisodeReplay",
    "ExecEpisode",
    "ExecReport",
    "ReplayEndpoint",
    "rerun_exec",
    # one process per task
    "AgentCommand",
    "Finished",
    "run_command",
]
