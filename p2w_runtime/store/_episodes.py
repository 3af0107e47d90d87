"""Which episode of a task counts: the one rule every command reads a run through.

A task can have several attempts in one run: ``record --resume`` closes an attempt that was
running when the recorder died as ``aborted`` and records the task again as ``TASK#2``. Only one
attempt per task may count, or metrics would score the aborted attempt as a failure while
``diff`` scores the retry (docs/design/episodes.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from p2w_runtime.store._event_store import EventStore
from schemas import EpisodeFinished, EpisodeStarted

NOT_AN_OUTCOME = frozenset({"aborted"})
"""End reasons that say the recorder stopped, not how the agent did: such an attempt never counts."""


@dataclass(frozen=True, slots=True)
class EpisodeRef:
    """One attempt at a task, without its events: enough to pick the counted one, check a cache, label a row."""

    stream: str
    task_id: str
    level: int | None
    scheme: str | None
    hash: str
    """The hash of the episode's last event: the trajectory hash its judgments are keyed by."""
    end_reason: str | None
    """None while the attempt has no ``episode.finished`` (running, or its recorder was killed)."""

    @property
    def run_id(self) -> str:
        return self.stream.partition("/")[0]


def counted(attempts: Iterable[EpisodeRef]) -> list[EpisodeRef]:
    """THE rule: per task of a run, the latest attempt (in start order) that finished with an outcome of the agent.

    Unfinished attempts and ``aborted`` ones never count; a task with no other attempt has no
    counted episode (it is still to do, and ``--resume`` records it). ``attempts`` are in start
    order; so is the result, by the start of each counted attempt.
    """
    latest: dict[tuple[str, str], EpisodeRef] = {}
    for attempt in attempts:
        if attempt.end_reason is not None and attempt.end_reason not in NOT_AN_OUTCOME:
            key = (attempt.run_id, attempt.task_id)
            latest.pop(key, None)
            latest[key] = attempt
    return list(latest.values())


async def episode_attempts(store: EventStore, run_id: str | None = None) -> list[EpisodeRef]:
    """Every attempt of a run (of every run without ``run_id``) in start order, from three small reads:
    ``episode.finished`` and ``episode.started`` events, then stream heads."""
    prefix = f"{run_id}/" if run_id is not None else None
    ends: dict[str, str] = {}
    async for stored in store.read_all(stream_prefix=prefix, types=["episode.finished"]):
        finished = stored.decode().payload
        assert isinstance(finished, EpisodeFinished)
        ends.setdefault(stored.stream, finished.end_reason)
    starts = [stored async for stored in store.read_all(stream_prefix=prefix, types=["episode.started"])]
    # heads last: every stream seen above has one by now, though other writers (workers) keep appending
    heads = {head.stream: head.last_hash for head in await store.list_streams(prefix=prefix)}
    refs: list[EpisodeRef] = []
    for stored in starts:
        started = stored.decode().payload
        assert isinstance(started, EpisodeStarted)
        refs.append(
            EpisodeRef(
                stored.stream,
                started.task_id,
                started.level,
                started.scheme,
                heads[stored.stream],
                ends.get(stored.stream),
            )
        )
    return refs


async def counted_episodes(store: EventStore, run_id: str) -> list[EpisodeRef]:
    """The episodes of a run that count (one per task, see ``counted``): what every command reports on."""
    return counted(await episode_attempts(store, run_id))
