"""``episodes_of``: the one query that lists a run's episodes, and the rule of which one counts.

A task can have several attempts in one run: ``record --resume`` closes an attempt that was
running when the recorder died as ``aborted`` and records the task again as ``TASK#2``. Only one
attempt per task may count, or metrics would score the aborted attempt as a failure while
``diff`` scores the retry (docs/design/episodes.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from p2w_runtime.domain._streams import episode_of, run_of, under
from schemas import EpisodeFinished, EpisodeStarted

if TYPE_CHECKING:
    from p2w_runtime.store import EventStore

NOT_AN_OUTCOME = frozenset({"aborted"})
"""End reasons that say the recorder stopped, not how the agent did: such an attempt never counts."""


@dataclass(frozen=True, slots=True)
class EpisodeRef:
    """One attempt at a task, without its steps: enough to pick the counted one, check a cache, list a row.

    It carries the attempt's ``episode.finished`` payload, read once by ``episodes_of``: no reader reads that event
    again to show how an episode ended.
    """

    stream: str
    task_id: str
    level: int | None
    scheme: str | None
    hash: str
    """The hash of the episode's last event: the trajectory hash its judgments are keyed by."""
    finished: EpisodeFinished | None
    """None while the attempt has no ``episode.finished`` (running, or its recorder was killed)."""

    @property
    def end_reason(self) -> str | None:
        return self.finished.end_reason if self.finished is not None else None

    @property
    def run_id(self) -> str:
        return run_of(self.stream)

    @property
    def episode_id(self) -> str:
        return episode_of(self.stream)


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


async def episodes_of(store: EventStore, run_id: str | None = None, *, every_attempt: bool = False) -> list[EpisodeRef]:
    """The episodes of run ``run_id`` (of every run without it) in start order: the counted ones (``counted``),
    or with ``every_attempt`` every attempt, aborted and unfinished ones included.

    Three small reads, never an episode's steps: ``episode.finished`` and ``episode.started`` events, then
    stream heads.
    """
    prefix = under(run_id) if run_id is not None else None
    ends: dict[str, EpisodeFinished] = {}
    async for stored in store.read_all(stream_prefix=prefix, types=["episode.finished"]):
        finished = stored.decode_payload()
        assert isinstance(finished, EpisodeFinished)
        ends.setdefault(stored.stream, finished)
    starts = [stored async for stored in store.read_all(stream_prefix=prefix, types=["episode.started"])]
    # heads last: every stream seen above has one by now, though other writers (workers) keep appending
    heads = {head.stream: head.last_hash for head in await store.list_streams(prefix=prefix)}
    refs: list[EpisodeRef] = []
    for stored in starts:
        started = stored.decode_payload()
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
    return refs if every_attempt else counted(refs)
