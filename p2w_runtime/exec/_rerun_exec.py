"""`rerun RUN --exec CMD`: any agent re-executed from its recording, one process per episode.

The agent is the user's (any language); p2w-rt only serves its recording and compares. Per selected episode it
starts CMD with ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` at the replay endpoint, ``P2W_TASK_ID``,
``P2W_TASK_FILE`` (the task as the episode recorded it) and ``P2W_REPLAY`` (the recording API's replay mode), and
reports the first divergence (docs/design/replay.md). Nothing is written to the store.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from p2w_runtime.domain import RunInfo, episodes_of
from p2w_runtime.exec._agent_process import run_agent
from p2w_runtime.exec._episode_replay import EpisodeReplay
from p2w_runtime.exec._replay_endpoint import ReplayEndpoint
from p2w_runtime.recording import REPLAY_ENV
from p2w_runtime.rerun import Mismatch, RecordedEpisode, load_episode, recorded_run, select_episodes
from p2w_runtime.store import EventStore

REPLAY_KEY = "p2w-replay-no-key"
"""The key the agent's client sends the endpoint: any non-empty string, so a client that requires one starts."""


@dataclass(frozen=True, slots=True)
class ExecEpisode:
    stream: str
    task_id: str
    mismatch: Mismatch | None
    returncode: int | None
    """The agent's exit code (None: killed at the timeout)."""
    stderr_tail: str
    """The agent's last line on standard error, to say why it failed."""

    @property
    def identical(self) -> bool:
        return self.mismatch is None

    def as_dict(self) -> dict[str, Any]:
        return {
            "stream": self.stream,
            "task_id": self.task_id,
            "identical": self.identical,
            "mismatch": self.mismatch.as_dict() if self.mismatch else None,
            "exit_code": self.returncode,
        }


@dataclass
class ExecReport:
    run: RunInfo
    command: str | None
    """The agent's command; None: re-executed in this process (Browser-Use)."""
    episodes: list[ExecEpisode] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return all(e.identical for e in self.episodes)


async def rerun_exec(
    store: EventStore,
    run_ref: str,
    command: str,
    task_ids: tuple[str, ...] = (),
    *,
    cwd: Path | None = None,
    timeout_s: float | None = None,
    progress: Callable[[ExecEpisode], None] | None = None,
) -> ExecReport:
    """Re-execute ``command`` once per counted episode of ``run_ref`` (or of ``task_ids``) against its recording."""
    run = await recorded_run(store, run_ref, "rerun", own_agent=False)
    refs = select_episodes(run, await episodes_of(store, run.run_id), task_ids)
    report = ExecReport(run, command)
    with tempfile.TemporaryDirectory(prefix="p2w-exec-") as tmp:
        async with ReplayEndpoint() as endpoint:
            for ref in refs:
                source = await load_episode(store, ref.stream)
                replay = EpisodeReplay(source)
                endpoint.episode = replay
                env = replay_env(endpoint, source, Path(tmp))
                ended = await run_agent(shell(command), env, Path(tmp) / f"{ref.task_id}.answer", cwd=cwd, timeout_s=timeout_s)
                endpoint.episode = None
                result = ExecEpisode(ref.stream, ref.task_id, replay.mismatch(), ended.status, ended.last_error_line())
                report.episodes.append(result)
                if progress is not None:
                    progress(result)
    return report


def shell(command: str) -> list[str]:
    """``command`` through the shell, as the user typed it (pipes, cd, variables)."""
    return ["/bin/sh", "-c", command]


def replay_env(endpoint: ReplayEndpoint, source: RecordedEpisode, folder: Path) -> dict[str, str]:
    """What the agent re-executing ``source`` is given: the replay endpoint as its OpenAI base URL, its task (written
    into ``folder``) and ``P2W_REPLAY`` for the recording API."""
    task = task_of(source)
    task_file = folder / f"{task['task_id']}.json"
    task_file.write_text(json.dumps(task))
    return {
        "OPENAI_BASE_URL": f"{endpoint.url}/v1",
        "OPENAI_API_KEY": REPLAY_KEY,
        "P2W_TASK_ID": task["task_id"],
        "P2W_TASK_FILE": str(task_file),
        REPLAY_ENV: endpoint.url,
    }


def task_of(source: RecordedEpisode) -> dict[str, Any]:
    """The task as the episode started it (``episode.started``): what the agent was asked, where it started."""
    task = source.task()
    return {
        "task_id": task.task_id,
        "persona": task.persona,
        "level": task.level,
        "intent": task.intent,
        "start_url": task.start_url,
    }
