"""Run-level read model: which runs a store holds, found by id or label."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from p2w_rt.schemas import EpisodeFinished, NewEvent, RunFinished, RunStarted
from p2w_runtime.domain._listing import EpisodeRef, counted, episodes_of
from p2w_runtime.domain._seal import append_sealed
from p2w_runtime.domain._summaries import NOT_AN_OUTCOME, run_summaries
from p2w_runtime.domain._writer import EpisodeWriter
from p2w_runtime.store import EventStore, LabelTaken, StoreError, seal_streams


class UnknownRun(StoreError):
    """No run matches the id or label the user gave."""


@dataclass(frozen=True, slots=True)
class RunInfo:
    run_id: str
    started: RunStarted
    recorded_at: str
    finished: RunFinished | None
    episodes: int
    """Episodes that count, one per task (``counted``)."""
    attempts: int
    """Every attempt recorded, aborted and unfinished ones included."""

    @property
    def label(self) -> str:
        return self.started.label

    @property
    def status(self) -> str:
        """``completed``, ``failed`` (every episode failed), ``interrupted``, or ``unfinished`` (no
        ``run.finished`` yet: still recording, or the recorder was killed). One name everywhere."""
        return self.finished.status if self.finished is not None else "unfinished"


async def list_runs(store: EventStore) -> list[RunInfo]:
    """Every run, oldest first, from the runs' summary rows (``_summaries.py``): no run's episodes are read."""
    runs: list[RunInfo] = []
    for summary in await run_summaries(store):
        started = summary.started.decode_payload()
        assert isinstance(started, RunStarted)
        finished = summary.finished.decode_payload() if summary.finished is not None else None
        assert finished is None or isinstance(finished, RunFinished)
        runs.append(RunInfo(summary.run_id, started, summary.recorded_at, finished, summary.episodes, summary.attempts))
    return runs


async def find_run(store: EventStore, ref: str) -> RunInfo:
    """A run by exact id, else by label (the newest run with that label), else a unique id prefix."""
    return match_run(await list_runs(store), ref, getattr(store, "label", "the store"))


def match_run(runs: Sequence[RunInfo], ref: str, where: str) -> RunInfo:
    """``find_run`` over runs already listed (``where`` names their store in the error)."""
    for run in runs:
        if run.run_id == ref:
            return run
    labelled = [r for r in runs if r.label == ref]
    if labelled:
        return labelled[-1]
    prefixed = [r for r in runs if r.run_id.startswith(ref)]
    if len(prefixed) == 1:
        return prefixed[0]
    known = ", ".join(r.label for r in runs[-5:]) or "none"
    raise UnknownRun(f"no run {ref!r} in {where} (labels: {known})")


async def check_label_free(store: EventStore, label: str) -> None:
    """Refuse a label another run holds before any work starts (the database refuses it again when the run is
    created, so a run that takes it meanwhile still loses nothing)."""
    for run in await list_runs(store):
        if run.label == label:
            raise LabelTaken(label, run.run_id, getattr(store, "label", "the store"))


async def close_run(
    store: EventStore, run_id: str, *, interrupted: bool = False, cost_usd: float | None = None
) -> RunFinished:
    """Append run ``run_id``'s ``run.finished``, derived from its log: how every attempt ended, how many episodes
    count, and the seals of its streams. Every writer of runs (agent, workers, fork, rerun, importers) closes them
    here. The status is ``interrupted`` when the recording was stopped, else ``failed`` when every counted episode
    ended in an error (nothing was measured), else ``completed``."""
    attempts = await episodes_of(store, run_id, every_attempt=True)
    reasons = Counter(a.end_reason for a in attempts if a.end_reason is not None)
    outcomes = Counter(a.end_reason for a in counted(attempts) if a.end_reason not in NOT_AN_OUTCOME)
    finished = RunFinished(
        status="interrupted" if interrupted else "failed" if outcomes and set(outcomes) == {"error"} else "completed",
        episodes=sum(outcomes.values()),
        end_reasons=dict(sorted(reasons.items())),
        cost_usd=cost_usd,
        seals=await seal_streams(store, run_id, into=run_id),
    )
    await store.append([NewEvent(stream=run_id, payload=finished)])
    return finished


UNFINISHED_DETAIL = "unfinished when the run was resumed"


async def abort_unfinished(store: EventStore, attempts: Sequence[EpisodeRef]) -> int:
    """Close every attempt that has no ``episode.finished`` (its recorder was killed) as ``aborted``, sealed: what
    resuming a run does first, so the task is tried again and the dead attempt never counts. Returns how many."""
    closing = [
        EpisodeWriter.closing(ref.stream).add(EpisodeFinished(end_reason="aborted", detail=UNFINISHED_DETAIL))
        for ref in attempts
        if ref.end_reason is None
    ]
    if closing:
        await append_sealed(store, closing)
    return len(closing)
