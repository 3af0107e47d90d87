"""`rerun RUN --exec CMD`: any agent re-executed from its recording, one process per episode.

The agent is the user's (any language); p2w-rt only serves its recording and compares. Per selected episode it
starts CMD with ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` at the replay endpoint, ``P2W_TASK_ID``,
``P2W_TASK_FILE`` (the task as the episode recorded it), ``P2W_MODEL`` and ``P2W_REPLAY`` (the recording API's replay
mode), with ``--restore har`` ``P2W_CDP_URL`` (a Chromium serving the pages the episode recorded), and reports the
first divergence (docs/design/replay.md). Nothing is written to the store.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.async_api import Playwright, async_playwright

from p2w_runtime.browser import find_chromium
from p2w_runtime.domain import RunInfo, episodes_of
from p2w_runtime.errors import UserError
from p2w_runtime.exec._agent_chromium import AgentChromium
from p2w_runtime.exec._agent_process import AgentExit, exited, run_agent, task_file
from p2w_runtime.exec._episode_replay import EpisodeReplay
from p2w_runtime.exec._replay_endpoint import ReplayEndpoint
from p2w_runtime.recording import REPLAY_ENV
from p2w_runtime.rerun import (
    Mismatch,
    RecordedEpisode,
    ReplayedEpisode,
    load_episode,
    recorded_har,
    recorded_run,
    select_episodes,
)
from p2w_runtime.scratch import scratch_folder
from p2w_runtime.store import EventStore

REPLAY_KEY = "p2w-replay-no-key"
"""The key the agent's client sends the endpoint: any non-empty string, so a client that requires one starts."""


@dataclass(frozen=True, slots=True)
class ExecEpisode(ReplayedEpisode):
    returncode: int | None
    """The agent's exit code (None: killed at the timeout)."""
    stderr_tail: str
    """The agent's last line on standard error, to say why it failed."""

    def as_dict(self) -> dict[str, Any]:
        return {**ReplayedEpisode.as_dict(self), "exit_code": self.returncode, "last_error_line": self.stderr_tail}


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
    restore_har: bool = False,
    progress: Callable[[ExecEpisode], None] | None = None,
) -> ExecReport:
    """Re-execute ``command`` once per counted episode of ``run_ref`` (or of ``task_ids``) against its recording;
    with ``restore_har`` the agent also gets a browser (``P2W_CDP_URL``) that serves each episode's recorded pages."""
    run = await recorded_run(store, run_ref, "rerun", own_agent=False)
    refs = select_episodes(run, await episodes_of(store, run.run_id), task_ids)
    sources = [await load_episode(store, ref.stream) for ref in refs]
    hars = [await _served_har(store, source) for source in sources] if restore_har else [None] * len(sources)
    report = ExecReport(run, command)
    with scratch_folder("exec") as tmp:
        async with ReplayEndpoint() as endpoint, async_playwright() as playwright:
            for ref, source, har in zip(refs, sources, hars, strict=True):
                replay = EpisodeReplay(source)
                endpoint.episode = replay
                env = replay_env(endpoint, source, tmp, run.started.backbone_model)
                async with _browser(playwright, source, har) as cdp_url:
                    env |= {"P2W_CDP_URL": cdp_url} if cdp_url else {}
                    answer_file = tmp / f"{ref.task_id}.answer"
                    ended = await run_agent(shell(command), env, answer_file, cwd=cwd, timeout_s=timeout_s)
                endpoint.episode = None
                found = replay.mismatch() or _failed_otherwise(run, source, ended)
                result = ExecEpisode(ref.stream, ref.task_id, found, ended.status, ended.last_error_line())
                report.episodes.append(result)
                if progress is not None:
                    progress(result)
    return report


def _failed_otherwise(run: RunInfo, source: RecordedEpisode, ended: AgentExit) -> Mismatch | None:
    """The agent failing where the recording ended otherwise: every call it made may have been answered as recorded
    and still it failed after them. A run ``record --exec`` made (``exec:NAME``) ended ``error`` exactly when its
    agent failed, so there an agent succeeding where it had failed differs too; an agent recording itself may end
    ``error`` and exit 0."""
    end = source.finished
    failed, failed_then = ended.status != 0, end is not None and end.end_reason == "error"
    if end is None or failed == failed_then or not (failed or run.started.agent.startswith("exec:")):
        return None
    steps = f"{end.end_reason} after {end.steps} step{'' if end.steps == 1 else 's'}"
    now = "the agent " + ("was killed at its time limit" if ended.status is None else exited(ended.status, "exited"))
    return Mismatch(None, "outcome differs", steps + (f": {end.detail}" if failed_then and end.detail else ""), now)


async def _served_har(store: EventStore, source: RecordedEpisode) -> bytes:
    """The episode's HAR with bodies, or the one line saying it has none (before any agent starts)."""
    har = await recorded_har(store, source)
    if har is None:
        raise UserError(
            f"episode {source.stream} has no HAR with response bodies to serve (record it with `record --exec CMD "
            "--har`); rerun without --restore har"
        )
    return har


@asynccontextmanager
async def _browser(playwright: Playwright, source: RecordedEpisode, har: bytes | None) -> AsyncIterator[str | None]:
    """A Chromium at the episode's start page serving ``har``, its debugging URL; None without a HAR."""
    if har is None:
        yield None
        return
    start_url = source.task().start_url
    async with AgentChromium(playwright, find_chromium(None), [], start_url, serve_har=har) as chromium:
        yield chromium.cdp_url


def shell(command: str) -> list[str]:
    """``command`` through the shell, as the user typed it (pipes, cd, variables)."""
    return ["/bin/sh", "-c", command]


def replay_env(endpoint: ReplayEndpoint, source: RecordedEpisode, folder: Path, model: str) -> dict[str, str]:
    """What the agent re-executing ``source`` is given: the replay endpoint as its OpenAI base URL, the recorded
    model's name (``P2W_MODEL``, as ``record --exec`` gave it), its task (written into ``folder``) and
    ``P2W_REPLAY`` for the recording API."""
    task = source.task()
    return {
        "OPENAI_BASE_URL": f"{endpoint.url}/v1",
        "OPENAI_API_KEY": REPLAY_KEY,
        "P2W_MODEL": model,
        "P2W_TASK_ID": task.task_id,
        "P2W_TASK_FILE": str(task_file(task, folder)),
        REPLAY_ENV: endpoint.url,
    }
