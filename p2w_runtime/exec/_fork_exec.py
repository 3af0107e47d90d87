"""`fork RUN TASK --at-step K --exec CMD`: an outside agent continued live after step K (docs/design/replay.md).

CMD runs once, as under ``rerun --exec`` (the replay endpoint, ``P2W_TASK_ID``, ``P2W_TASK_FILE``, ``P2W_REPLAY``)
plus ``P2W_FORK``: its model calls before step K are answered from the recording, in order, those from step K on by
the live model (and recorded by the agent as it records any call); history queries before step K get the recorded
hits, later ones search. The recording API writes the episode into the agent's own store as a new run (label
``RUN-TASK-at-K`` by default, the live model, ``fork_of``, ``fork_at_step``) whose ``episode.started.fork`` names
the source episode and step, as the own agent's fork does. The agent browses live pages: its browser is its own (no
``P2W_CDP_URL``).

So a run ``record --exec`` made (``exec:NAME``) is refused before its agent starts: such an agent records nothing
itself (the proxy and the observed Chromium did) and may need p2w-rt's browser, which a fork would have to restore at
step K from the HAR and then switch to the live sites (docs/design/exec.md, "Outside rerun and fork").

p2w-rt holds the label's claim ``record/LABEL`` for the agent while it runs (``holding_fork``), so a second fork into
the label is refused in one line before its agent starts. A fork killed after the agent's run started is completed by
the same fork given again, as the own agent's is (``_fork_run``): p2w-rt closes the half episode as ``aborted`` and
the agent continues that run (``Fork.resume``), forking the episode again as the task's next attempt; a run whose
episode had ended is only closed, no agent started. On Ctrl-C the agent is killed and its run closed ``interrupted``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from p2w_rt.schemas import ForkPoint
from p2w_runtime.agent import EpisodeOutcome
from p2w_runtime.domain import RunInfo, episodes_of, list_runs, resume_run
from p2w_runtime.errors import UserError
from p2w_runtime.exec._agent_process import AgentExit, run_agent
from p2w_runtime.exec._episode_replay import EpisodeReplay
from p2w_runtime.exec._live import LiveModel
from p2w_runtime.exec._replay_endpoint import ReplayEndpoint
from p2w_runtime.exec._rerun_exec import replay_env, shell
from p2w_runtime.recording import FORK_ENV, Fork
from p2w_runtime.rerun import (
    ForkTarget,
    Mismatch,
    close_ended,
    holding_fork,
    load_episode,
    recorded_run,
    select_episodes,
)
from p2w_runtime.scratch import scratch_folder
from p2w_runtime.store import EventStore


@dataclass(frozen=True, slots=True)
class ExecFork:
    """The forked run (None when the agent wrote none), how the agent ended, and whether its replayed prefix
    differed from the recording (the first refused request)."""

    source_stream: str
    at_step: int
    label: str
    run: RunInfo | None
    finished: AgentExit | None
    """None when no agent ran: the run the same fork left had its episode ended, and was only closed."""
    prefix_mismatch: Mismatch | None
    left: Literal["new", "forked again", "closed"] = "new"
    """The run: new, or one the same fork left unfinished, its episode forked again or only closed."""
    aborted: int = 0
    """The half episodes of such a run closed as ``aborted``."""
    ended: EpisodeOutcome | None = None
    """How the episode of a run only closed had ended."""


async def fork_exec(
    store: EventStore,
    run_ref: str,
    task_id: str,
    at_step: int,
    command: str,
    live: LiveModel,
    *,
    label: str | None = None,
    cwd: Path | None = None,
    timeout_s: float | None = None,
) -> ExecFork:
    """Fork ``task_id`` of ``run_ref`` at ``at_step`` by running ``command`` (the agent that recorded it)."""
    run = await recorded_run(store, run_ref, "fork", own_agent=False)
    if run.started.agent.startswith("exec:"):
        raise UserError(
            f"run {run.label!r} was recorded by `record --exec` ({run.started.agent}): fork --exec continues only an "
            "agent that records itself through the recording API and brings its own browser; re-execute this one "
            "with `rerun --exec CMD --restore har`"
        )
    (ref,) = select_episodes(run, await episodes_of(store, run.run_id), (task_id,))
    source = await load_episode(store, ref.stream)
    last = max(source.observations, default=0)
    if not 1 <= at_step <= last:
        raise UserError(f"episode {ref.stream} observed steps 1..{last}; --at-step {at_step} is not one of them")
    label = label or f"{run.label}-{task_id}-at-{at_step}"
    model = live.model or run.started.backbone_model
    target = ForkTarget(label, ref.stream, at_step, model, run.started.scheme, run.started.agent)
    async with holding_fork(store, target) as left:
        if left is not None and (ended := await close_ended(store, left)) is not None:
            closed = await _labelled(store, label)
            return ExecFork(ref.stream, at_step, label, closed, None, None, "closed", ended=ended)
        aborted = (await resume_run(store, left.run_id)).aborted if left is not None else 0
        point = ForkPoint(
            source_stream=ref.stream, at_step=at_step, source_event_id=source.observations[at_step].event_id
        )
        fork = Fork(label, model, point, resume=left is not None)
        with scratch_folder("fork-exec") as tmp:
            async with ReplayEndpoint() as endpoint, live.client() as client:
                replay = EpisodeReplay(source, live=(at_step, live, client))
                endpoint.episode = replay
                env = {**replay_env(endpoint, source, tmp, run.started.backbone_model), FORK_ENV: fork.as_env()}
                answer = tmp / f"{task_id}.answer"
                try:
                    finished = await run_agent(shell(command), env, answer, cwd=cwd, timeout_s=timeout_s)
                except asyncio.CancelledError:  # Ctrl-C: the agent is killed, its run closed as the own fork's is
                    await _interrupted(store, label)
                    raise
        written = await _labelled(store, label)
    again: Literal["new", "forked again"] = "new" if left is None else "forked again"
    return ExecFork(ref.stream, at_step, label, written, finished, replay.seam, again, aborted)


async def _labelled(store: EventStore, label: str) -> RunInfo | None:
    return next((r for r in await list_runs(store) if r.label == label), None)


async def _interrupted(store: EventStore, label: str) -> None:
    """Close the run the killed agent left open as ``interrupted``, its half episode ``aborted``."""
    run = await _labelled(store, label)
    if run is not None and run.finished is None:
        await (await resume_run(store, run.run_id)).close(interrupted=True)
