"""An agent re-executed in this process against its recording: the ``rerun`` of an agent integration.

Per selected episode the agent's own recording code runs under the recording API's replay mode (``P2W_REPLAY`` and
``P2W_TASK_ID`` set for this process while it runs), with an ``openai`` client at the replay endpoint: its model
calls and history retrievals are answered from the recording, and the episode it records (in memory: replay mode
writes nothing) is handed back and compared decision by decision with the recorded one, as ``rerun --exec``
compares an agent process's. Browser-Use's ``rerun`` is one; an installed package's agent brings its own as one
call of ``rerun_in_process`` (docs/design/plugins.md), so the loop, the endpoint and replay mode stay p2w-rt's.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass

import openai

from p2w_runtime.data import Task
from p2w_runtime.domain import RunInfo, episodes_of
from p2w_runtime.exec._episode_replay import EpisodeReplay, Volatile
from p2w_runtime.exec._replay_endpoint import ReplayEndpoint
from p2w_runtime.exec._rerun_exec import REPLAY_KEY, ExecEpisode, ExecReport
from p2w_runtime.recording import REPLAY_ENV
from p2w_runtime.rerun import RecordedEpisode, load_episode, recorded_run, select_episodes
from p2w_runtime.store import EventStore


@dataclass(frozen=True, slots=True)
class InProcessEpisode:
    """One episode to re-execute: the run that recorded it (label, model, scheme, config), its recording, and the
    model client the agent is to ask."""

    run: RunInfo
    source: RecordedEpisode
    client: openai.AsyncOpenAI
    """At the replay endpoint, answered from the recording (``recording.instrument`` of any client asks it too)."""

    @property
    def task(self) -> Task:
        """The task as the episode recorded it: the one task ``open_run`` may do in replay mode."""
        return self.source.task()


async def rerun_in_process(
    store: EventStore,
    run_ref: str,
    episode: Callable[[InProcessEpisode], Awaitable[None]],
    task_ids: tuple[str, ...] = (),
    *,
    volatile: Callable[[], Volatile] | None = None,
    progress: Callable[[ExecEpisode], None] | None = None,
) -> ExecReport:
    """Re-execute ``episode`` (the agent recording one task through the recording API, as it does when it records)
    for each counted episode of ``run_ref`` (or ``task_ids``) against its recording; the report is ``rerun``'s
    "in process" one (``command`` None). An exception ``episode`` raises is that episode's divergence (exit 1 and
    its line), not the end of the rerun. ``volatile`` makes each episode's ``Volatile``, for an agent whose prompts
    change where nothing it decided did."""
    run = await recorded_run(store, run_ref, "rerun", own_agent=False)
    refs = select_episodes(run, await episodes_of(store, run.run_id), task_ids)
    report = ExecReport(run, None)
    async with ReplayEndpoint() as endpoint:
        client = openai.AsyncOpenAI(base_url=f"{endpoint.url}/v1", api_key=REPLAY_KEY, max_retries=0)
        async with client:
            for ref in refs:
                source = await load_episode(store, ref.stream)
                replay = EpisodeReplay(source, None if volatile is None else volatile())
                endpoint.episode = replay
                error = ""
                with _replay_mode(endpoint.url, ref.task_id):
                    try:
                        await episode(InProcessEpisode(run, source, client))
                    except Exception as failed:  # noqa: BLE001 - the agent's failure is its episode's divergence
                        error = f"{type(failed).__name__}: {failed}"
                endpoint.episode = None
                result = ExecEpisode(ref.stream, ref.task_id, replay.mismatch(), 1 if error else 0, error)
                report.episodes.append(result)
                if progress is not None:
                    progress(result)
    return report


@contextlib.contextmanager
def _replay_mode(url: str, task_id: str) -> Iterator[None]:
    """The recording API's replay mode for this process, as ``rerun --exec`` sets it for an agent's process."""
    saved = {name: os.environ.get(name) for name in (REPLAY_ENV, "P2W_TASK_ID")}
    os.environ.update({REPLAY_ENV: url, "P2W_TASK_ID": task_id})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
