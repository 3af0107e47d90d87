"""The run page's episode order (``?sort=KEY&order=asc|desc``): by any column, over every episode the filter keeps,
not just the page shown, so the ten lowest P_avg of a 1,000-episode run are on page 1.

An episode without the value (not judged by the selected judge, unfinished, no usage) sorts after every episode
that has it, whichever the direction, so the missing ones never hide the ones asked for. "Failures first" puts
the episodes the selected judge failed (or, unjudged, that ended without an answer) first, those with the most
error labels and then the lowest P_avg first among them; then the unjudged answered ones; then the successes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, TypeVar

from p2w_cli.view._usage import EpisodeUsage
from p2w_rt.replay.judges import ScoresRecord
from p2w_rt.replay.metrics import EPISODE_KEYS, METRICS, TITLES
from p2w_rt.schemas import EpisodeFinished
from p2w_runtime.domain import EpisodeRef

SORT_KEYS: dict[str, str] = {
    "failures": "failures first",
    "task": "task",
    "level": "level",
    "website": "website",
    "end": "end reason",
    "steps": "steps",
    "time": "time",
    "tokens": "tokens",
    "cost": "cost",
    **{m: TITLES[m] for m in METRICS},
    "labels": "error labels",
}
"""Every ``?sort=`` value, with what the page calls it."""
ORDERS = ("asc", "desc")


class Sortable(Protocol):
    """What ordering reads of a run page's row (``EpisodeRow``)."""

    @property
    def ref(self) -> EpisodeRef: ...
    @property
    def index(self) -> int: ...
    @property
    def finished(self) -> EpisodeFinished | None: ...
    @property
    def website(self) -> str: ...
    @property
    def judgments(self) -> dict[str, ScoresRecord]: ...
    @property
    def labels(self) -> list[str]: ...


Row = TypeVar("Row", bound=Sortable)
Value = float | str | tuple[float, ...] | None


def _metric(row: Sortable, judge: str, key: str) -> float | None:
    record = row.judgments.get(judge)
    return None if record is None else record.judgment.metrics.get(key)


def _failures(row: Sortable, judge: str) -> tuple[float, ...]:
    success = _metric(row, judge, "success")
    if success == 1.0:
        rank = 2.0
    elif success is not None or row.finished is None or row.finished.end_reason != "answered":
        rank = 0.0
    else:
        rank = 1.0
    p_avg = _metric(row, judge, "p_avg")
    return (rank, -float(len(row.labels)), 1.0 if p_avg is None else p_avg)


def _reader(key: str, judge: str, usage: Mapping[str, EpisodeUsage]) -> Callable[[Sortable], Value]:
    """How ``key`` reads a row's value (None: the row has none)."""
    if key in METRICS:
        return lambda row: _metric(row, judge, EPISODE_KEYS[key])

    def used(row: Sortable) -> EpisodeUsage | None:
        return usage.get(row.ref.stream)

    readers: dict[str, Callable[[Sortable], Value]] = {
        "failures": lambda row: _failures(row, judge),
        "task": lambda row: row.ref.task_id,
        "level": lambda row: row.ref.level,
        "website": lambda row: row.website or None,
        "end": lambda row: row.finished.end_reason if row.finished else "unfinished",
        "steps": lambda row: row.finished.steps if row.finished else None,
        "time": lambda row: u.seconds if (u := used(row)) else None,
        "tokens": lambda row: u.usage.tokens if (u := used(row)) else None,
        "cost": lambda row: u.usage.cost_usd if (u := used(row)) else None,
        "labels": lambda row: len(row.labels),
    }
    return readers[key]


def ordered(
    rows: Sequence[Row], sort: str, descending: bool, judge: str, usage: Mapping[str, EpisodeUsage]
) -> list[Row]:
    """``rows`` (in recording order) by ``sort`` (``""``: recording order), ties in recording order."""
    if not sort:
        return list(reversed(rows)) if descending else list(rows)
    read = _reader(sort, judge, usage)
    valued = [(read(row), row) for row in rows]
    present = [(value, row) for value, row in valued if value is not None]
    present.sort(key=lambda pair: pair[0], reverse=descending)
    return [row for _, row in present] + [row for value, row in valued if value is None]
