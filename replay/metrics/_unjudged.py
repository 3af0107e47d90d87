"""Why a table has no figure for a run, so that what a command says of it is true: a run with no finished episode
has nothing to judge (a hint to judge it would be false), and a judge whose judgments of a run failed judges it again
only when told to retry (``replay --retry-failed``)."""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from p2w_rt.replay.derived import DerivedRecord, run_heads
from p2w_rt.replay.judges import read_scores
from p2w_rt.replay.metrics._collect import EpisodeScore
from p2w_runtime.domain import RunInfo, episodes_of
from p2w_runtime.errors import clip
from p2w_runtime.store import EventStore

R = TypeVar("R", bound=DerivedRecord[Any])


def failed_now(records: Iterable[R], heads: Mapping[str, str]) -> list[R]:
    """The failed results made on the episodes as ``heads`` has them: ``replay.derived.current_of``'s rule, for the
    failures a pass keeps."""
    return [
        r
        for r in records
        if r.payload.status != "ok" and heads.get(r.payload.episode_stream) == r.payload.trajectory_hash
    ]


async def nothing_to_judge(store: EventStore, info: RunInfo) -> str | None:
    """What a run without a finished episode has instead ("run A has no episodes", or its unfinished attempts; its
    label as typed in a shell); None when it has one."""
    if await episodes_of(store, info.run_id):
        return None
    attempts = len(await episodes_of(store, info.run_id, every_attempt=True))
    what = f"no finished episode ({attempts} attempt(s) that did not finish)" if attempts else "no episodes"
    return f"run {shlex.quote(clip(info.label))} has {what}"


@dataclass(frozen=True, slots=True)
class Unjudged:
    """A run with finished episodes of which a table scores none, and no judge left out for its version."""

    run: str
    """The run's label."""
    judge: str | None
    """The judge the table was asked for (``metrics --judge``); None for every judge."""
    failed: tuple[str, ...]
    """The judges (``judge`` only, when given) whose judgments of its episodes as they are now failed."""


async def unjudged_of(
    store: EventStore, runs: Sequence[RunInfo], scores: Sequence[EpisodeScore], judge: str | None
) -> list[Unjudged]:
    """The runs of ``scores`` none of whose episodes a table scores, each with the judges that failed on them."""
    out: list[Unjudged] = []
    for info in runs:
        mine = [s for s in scores if s.run_id == info.run_id]
        if not mine or any(s.metrics or s.other_versions for s in mine):
            continue
        failed = failed_now(await read_scores(store, info.run_id), await run_heads(store, info.run_id))
        judges = sorted({r.producer_id for r in failed if judge is None or r.producer_id == judge})
        out.append(Unjudged(info.label, judge, tuple(judges)))
    return out
