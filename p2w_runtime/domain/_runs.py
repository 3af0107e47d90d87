"""Run-level read model: which runs a store holds, found by id or label."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import orjson
from pydantic import ValidationError

from p2w_rt.schemas import ChainedEvent, RunFinished, RunStarted
from p2w_runtime.domain._summaries import run_summaries
from p2w_runtime.errors import UserError, clip
from p2w_runtime.store import EventStore, StoreError


class UnknownRun(StoreError):
    """No run matches the id or label the user gave."""


class RunNamedTwice(UserError):
    """A command over several runs was given one run twice (the same reference, or its label and an id prefix):
    every figure over the runs would count its episodes twice."""

    exit_code = 2


class BadRunStarted(StoreError):
    """A run's ``run.started`` no longer validates: a writer stored a value of another type under a key p2w-rt reads
    (its config was an untyped dict before ``RunConfig``). Its bytes, and so its hash, are untouched."""


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
        started = _started(summary.run_id, summary.started)
        finished = summary.finished.decode_payload() if summary.finished is not None else None
        assert finished is None or isinstance(finished, RunFinished)
        runs.append(RunInfo(summary.run_id, started, summary.recorded_at, finished, summary.episodes, summary.attempts))
    return runs


async def find_run(store: EventStore, ref: str) -> RunInfo:
    """A run by exact id, else by label (the newest run with that label), else a unique id prefix."""
    return match_run(await list_runs(store), ref, getattr(store, "label", "the store"))


async def find_runs(store: EventStore, refs: Sequence[str]) -> list[RunInfo]:
    """Each reference as its run (``find_run``, over one listing); a run named twice is ``RunNamedTwice``."""
    runs = await list_runs(store)
    found = [match_run(runs, ref, getattr(store, "label", "the store")) for ref in refs]
    check_named_once(refs, found, [None] * len(found))
    return found


def check_named_once(refs: Sequence[str], runs: Sequence[RunInfo], stores: Sequence[object]) -> None:
    """``RunNamedTwice`` when two of ``refs`` found the same run (``runs``) of the same store (``stores``: runs of
    two files may share an id, one file being a copy of the other)."""
    seen: dict[tuple[object, str], str] = {}
    for ref, run, store in zip(refs, runs, stores, strict=True):
        first = seen.get((store, run.run_id))
        if first is not None:
            said = "" if first == ref else f" (as {clip(first)!r} and {clip(ref)!r})"
            raise RunNamedTwice(f"run {run.label!r} ({run.run_id}) is named twice{said}: name each run once")
        seen[(store, run.run_id)] = ref


def match_run(runs: Sequence[RunInfo], ref: str, where: str) -> RunInfo:
    """``find_run`` over runs already listed (``where`` names their store in the error); an id prefix of several
    runs is refused naming them, never one of them picked."""
    for run in runs:
        if run.run_id == ref:
            return run
    labelled = [r for r in runs if r.label == ref]
    if labelled:
        return labelled[-1]
    prefixed = [r for r in runs if r.run_id.startswith(ref)]
    if len(prefixed) == 1:
        return prefixed[0]
    if len(prefixed) > 1:
        shown = ", ".join(f"{r.run_id} ({r.label})" for r in prefixed[:5])
        more = f" and {len(prefixed) - 5} more" if len(prefixed) > 5 else ""
        raise UnknownRun(f"run {ref!r} in {where} is ambiguous: an id prefix of {shown}{more}")
    known = ", ".join(r.label for r in runs[-5:]) or "none"
    raise UnknownRun(f"no run {ref!r} in {where} (labels: {known})")


def _started(run_id: str, event: ChainedEvent) -> RunStarted:
    """The run's ``run.started``; ``BadRunStarted``, one line naming the run and the first field, when it does not
    validate."""
    try:
        started = event.decode_payload()
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"] if part != "run.started")
        label = orjson.loads(event.payload_json).get("label")
        named = f"run {label!r} ({run_id})" if isinstance(label, str) else f"run {run_id}"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise BadRunStarted(
            f"{named}: its run.started field {where} holds {repr(first['input'])[:80]}: {first['msg']}{more}"
        ) from None
    assert isinstance(started, RunStarted)
    return started
