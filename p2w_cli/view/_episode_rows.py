"""One episode's line on a run page (``EpisodeRow``: where it ended, its current scores and error labels) and
the filter a run page keeps rows by (``EpisodeFilter``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from p2w_rt.replay.judges import ScoresRecord
from p2w_rt.schemas import EpisodeFinished
from p2w_runtime.domain import EpisodeRef

SUCCESS_VALUES = ("", "yes", "no", "unjudged")


@dataclass(slots=True)
class EpisodeRow:
    """One episode on a run page: where it ended, its current judgments and error labels."""

    ref: EpisodeRef
    index: int
    finished: EpisodeFinished | None
    website: str = ""
    """The host the episode ended on."""
    judgments: dict[str, ScoresRecord] = field(default_factory=dict)
    """Each judge's current judgment as its scores (the episode page reads the whole judgments)."""
    labels: list[str] = field(default_factory=list)

    @property
    def episode_id(self) -> str:
        return self.ref.episode_id

    def success(self, judge: str | None) -> bool | None:
        record = self.judgments.get(judge or "")
        if record is None or "success" not in record.judgment.metrics:
            return None
        return record.judgment.metrics["success"] == 1.0


@dataclass(frozen=True, slots=True)
class EpisodeFilter:
    level: int | None = None
    website: str = ""
    label: str = ""
    success: str = ""
    """``yes``, ``no``, ``unjudged`` or empty (any), by ``judge``."""
    judge: str = ""
    end: str = ""
    """An end reason, ``unfinished``, or empty (any)."""
    sort: str = ""
    """A key of ``SORT_KEYS`` (by ``judge`` for a metric), or empty: recording order."""
    descending: bool = False

    def keeps(self, row: EpisodeRow) -> bool:
        if self.level is not None and row.ref.level != self.level:
            return False
        if self.website and row.website != self.website:
            return False
        if self.label and self.label not in row.labels:
            return False
        if self.end and (row.finished.end_reason if row.finished else "unfinished") != self.end:
            return False
        if self.success:
            won = row.success(self.judge)
            wanted = {"yes": True, "no": False, "unjudged": None}.get(self.success, won)
            return won is wanted
        return True
