"""The run a fork records into, and the same fork given again after it was stopped.

A fork stopped after its run started (kill -9, Ctrl-C, its store out of reach) leaves the run unfinished, or
``interrupted``, under its label: the label is the researcher's handle on the result, so the same fork given again
(same source episode and step, same agent, live model and scheme; ``fork`` and ``fork --exec`` alike) completes that
run instead of being refused. Its half episode is closed as ``aborted`` and the episode forked again as the task's
next attempt, as ``record --resume`` does; a run whose episode had ended before the stop is only closed. A finished
fork, or a run of anything else, keeps its label, refused in one line. One process records into a label at a time
(``holding_run``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any

from p2w_rt.schemas import Scheme
from p2w_runtime.agent import AGENT_NAME, EpisodeOutcome
from p2w_runtime.domain import RunInfo, RunRecording, attempt_id, holding_run, list_runs, resume_run
from p2w_runtime.errors import UserError
from p2w_runtime.store import EventStore, LabelTaken


@dataclass(frozen=True)
class ForkTarget:
    """What a fork's run states, to tell the same fork given again from another one; ``agent``: the own one, or
    the outside agent of ``fork --exec``, which may state no scheme."""

    label: str
    source_stream: str
    at_step: int
    model: str
    scheme: Scheme | None
    agent: str = AGENT_NAME

    def config(self) -> dict[str, Any]:
        """The keys of ``run.started.config`` naming the fork point."""
        return {"fork_of": self.source_stream, "fork_at_step": self.at_step}

    def describe(self) -> str:
        by = self.model if self.agent == AGENT_NAME else f"{self.agent} with {self.model}"
        scheme = f" ({self.scheme})" if self.scheme else ""
        return f"a fork of {self.source_stream} at step {self.at_step} by {by}{scheme}"


@asynccontextmanager
async def holding_fork(store: EventStore, target: ForkTarget) -> AsyncIterator[RunInfo | None]:
    """Hold ``target``'s label while the fork records (the claim ``record/LABEL``), yielding the run the same fork
    left unfinished there, None when the label is free; refuse any other holder in one line, before any work."""
    async with holding_run(store, target.label, then="give the same fork again once that one has ended"):
        yield await _left_by(store, target)


async def _left_by(store: EventStore, target: ForkTarget) -> RunInfo | None:
    holder = next((r for r in await list_runs(store) if r.label == target.label), None)
    if holder is None:
        return None
    open_ = holder.finished is None or holder.status == "interrupted"
    if open_ and _same_fork(holder, target):
        return holder
    recorded = _as_target(holder, target.label)
    if open_ and recorded is not None:
        raise UserError(
            f"run {target.label!r} ({holder.run_id}) is {recorded.describe()}, left {holder.status}, not "
            f"{target.describe()}: give that fork again to complete it, or choose another --label"
        )
    raise LabelTaken(target.label, holder.run_id, getattr(store, "label", "the store"))


def _same_fork(run: RunInfo, target: ForkTarget) -> bool:
    """Whether ``run`` was started by ``target``'s fork; a run from before ``fork_at_step`` was kept (step 0) matches
    at any step: its default label names the step."""
    recorded = _as_target(run, target.label)
    if recorded is None:
        return False
    return recorded == target or (recorded.at_step == 0 and replace(recorded, at_step=target.at_step) == target)


def _as_target(run: RunInfo, label: str) -> ForkTarget | None:
    """The fork ``run`` records, None when it is no fork; step 0: not recorded."""
    config, started = run.started.config, run.started
    source, at_step = config.extra("fork_of"), config.extra("fork_at_step", 0)
    if not isinstance(source, str) or not isinstance(at_step, int):
        return None
    return ForkTarget(label, source, at_step, started.backbone_model, started.scheme, started.agent)


async def close_ended(store: EventStore, left: RunInfo) -> EpisodeOutcome | None:
    """Close ``left`` when its episode had ended before the fork was stopped, and say how that episode ended (with
    nothing spent now); None when it is still to fork."""
    if not left.episodes:
        return None
    recording = await resume_run(store, left.run_id)
    (ref,) = recording.counted.values()
    await recording.close()
    assert ref.finished is not None  # a counted attempt has finished
    done = ref.finished
    return EpisodeOutcome(ref.stream, ref.task_id, done.end_reason, done.answer, done.steps, detail=done.detail)


def next_episode_id(recording: RunRecording, source_episode_id: str, task_id: str) -> str:
    """The source's episode id in a new run; in a reopened one, the task's first attempt id not taken yet."""
    if not recording.attempts:
        return source_episode_id
    taken = {a.episode_id for a in recording.attempts}
    attempt = len(recording.attempts) + 1
    while attempt_id(task_id, attempt) in taken:
        attempt += 1
    return recording.episode_id(task_id, attempt)
