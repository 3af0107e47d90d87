"""``episodes_of``: the one query that lists a run's episodes, and the rule of which one counts.

A task can have several attempts in one run: ``record --resume`` closes an attempt that was
running when the recorder died as ``aborted`` and records the task again as ``TASK#2``. Only one
attempt per task may count, or metrics would score the aborted attempt as a failure while
``diff`` scores the retry (docs/design/episodes.md).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from p2w_rt.schemas import EpisodeFinished
from p2w_runtime.domain._streams import episode_of, run_of
from p2w_runtime.domain._summaries import episode_summaries
from p2w_runtime.domain._summary_rows import NOT_AN_OUTCOME

if TYPE_CHECKING:
    from p2w_runtime.store import EventStore


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


async def episodes_of(
    store: EventStore,
    run_id: str | None = None,
    *,
    every_attempt: bool = False,
    tasks: Collection[str] | None = None,
) -> list[EpisodeRef]:
    """The episodes of run ``run_id`` (of every run without it) in start order: the counted ones (``counted``),
    or with ``every_attempt`` every attempt, aborted and unfinished ones included; with ``tasks``, those of these
    tasks only (a task's counted episode depends on its own attempts alone).

    Reads the run's summary rows (``_summaries.py``), never an episode's steps nor another run's rows; an
    unfinished attempt's head is read from its stream (its last event is not a summary event). Only the attempts
    asked for are decoded: a label posted on a 10,000-episode run decodes its task's (docs/design/view.md).
    """
    refs: list[EpisodeRef] = []
    for attempt in await episode_summaries(store, run_id):
        if tasks is not None and attempt.task_id not in tasks:
            continue
        if attempt.finished is not None:
            finished = attempt.finished.decode_payload()
            assert isinstance(finished, EpisodeFinished)
            head = attempt.finished.hash
        else:
            finished = None
            found = await store.stream_head(attempt.stream)
            head = found.last_hash if found is not None else ""
        refs.append(EpisodeRef(attempt.stream, attempt.task_id, attempt.level, attempt.scheme, head, finished))
    return refs if every_attempt else counted(refs)
