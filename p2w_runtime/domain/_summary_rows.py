"""The summary rows of runs and episode attempts: what each holds, its JSON body, and a run's counts of its
attempts (``_summaries.py`` folds the log into them and keeps them current)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from p2w_rt.schemas import ChainedEvent
from p2w_runtime.domain._streams import run_of
from p2w_runtime.store import Summary

MODEL = "runs.v1"
"""The read model's name, its mark's key: a change of what the rows hold takes a new name, rebuilt from the log."""
RUNS = "run.v1"
EPISODES = "episode.v1"
NOT_AN_OUTCOME = frozenset({"aborted"})
"""End reasons that say the recorder stopped, not how the agent did: such an attempt never counts."""


@dataclass(frozen=True, slots=True)
class EpisodeSummary:
    """An attempt as its summary row holds it: what a listing shows of its ``episode.started`` (task, level,
    scheme) and its first ``episode.finished`` whole (the stored event: its payload is decoded by the reader)."""

    stream: str
    position: int
    task_id: str
    level: int | None
    scheme: str | None
    finished: ChainedEvent | None = None
    end_reason: str | None = None

    def row(self) -> Summary:
        body = [self.task_id, self.level, self.scheme, _listed(self.finished), self.end_reason]
        return Summary(EPISODES, self.stream, run_of(self.stream), self.position, orjson.dumps(body).decode())

    @classmethod
    def of(cls, row: Summary) -> EpisodeSummary:
        task_id, level, scheme, finished, end_reason = orjson.loads(row.body)
        ended = ChainedEvent(*finished) if finished else None
        return cls(row.key, row.ordinal, task_id, level, scheme, ended, end_reason)


@dataclass(slots=True)
class RunSummary:
    """A run as its summary row holds it: its ``run.started`` (and when), its latest ``run.finished``, and how
    many attempts it holds and how many count (``counted``'s rule: tasks with an attempt that has an outcome)."""

    run_id: str
    position: int
    started: ChainedEvent
    recorded_at: str
    finished: ChainedEvent | None = None
    episodes: int = 0
    attempts: int = 0

    def row(self) -> Summary:
        body = {
            "started": list(self.started), "at": self.recorded_at, "finished": _listed(self.finished),
            "episodes": self.episodes, "attempts": self.attempts,
        }  # fmt: skip
        return Summary(RUNS, self.run_id, "", self.position, orjson.dumps(body).decode())

    @classmethod
    def of(cls, row: Summary) -> RunSummary:
        body = orjson.loads(row.body)
        finished = body["finished"]
        return cls(
            row.key, row.ordinal, ChainedEvent(*body["started"]), body["at"],
            ChainedEvent(*finished) if finished else None, body["episodes"], body["attempts"],
        )  # fmt: skip


def _listed(event: ChainedEvent | None) -> list[Any] | None:
    """A stored event's fields as JSON holds them (orjson writes no named tuples)."""
    return list(event) if event is not None else None


def counts(attempts: Iterable[EpisodeSummary]) -> tuple[int, int]:
    """(episodes that count, attempts) of one run's attempts."""
    tasks: set[str] = set()
    n = 0
    for attempt in attempts:
        n += 1
        if attempt.end_reason is not None and attempt.end_reason not in NOT_AN_OUTCOME:
            tasks.add(attempt.task_id)
    return len(tasks), n
