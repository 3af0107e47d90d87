"""Judgments read for a table of scores (``metrics``, a plugin's metrics tables): each judgment's key, status and
metrics, without the evidence and points that make up most of its stored text and most of the cost of validating it.

The same stream as ``_records``'s, and the same rule of "current" (``replay.derived.latest_current``). The fields read
are validated, and one that does not validate fails as the whole judgment would; the skipped ones are not checked here
(``verify`` checks every payload).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from p2w_rt.replay.derived import DerivedRecord, DerivedStream, NarrowResult, narrow_decode
from p2w_rt.schemas import Judgment
from p2w_runtime.domain import JUDGMENTS_SUFFIX
from p2w_runtime.store import EventStore


class JudgmentScores(NarrowResult):
    """The fields of a ``Judgment`` a table of scores reads; the others in the stored text are skipped."""

    type: Literal["judgment"] = "judgment"
    judge_id: str
    judge_version: str
    metrics: dict[str, float] = Field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ScoresRecord(DerivedRecord[JudgmentScores]):
    kind = "judge"

    @property
    def judgment(self) -> JudgmentScores:
        return self.payload


JUDGMENT_SCORES = DerivedStream(
    JUDGMENTS_SUFFIX, "judgment", JudgmentScores, ScoresRecord, narrow_decode(JudgmentScores, Judgment.SCHEMA_VERSION)
)
read_scores = JUDGMENT_SCORES.read
"""Every judgment of a run as its scores, oldest first."""


async def current_scores(
    store: EventStore, run_id: str, judge_id: str | None = None
) -> dict[tuple[str, str], ScoresRecord]:
    """``current_judgments`` as scores: the latest successful judgment per (episode stream, judge) that judged the
    episode as it is now."""
    current = await JUDGMENT_SCORES.current(store, run_id)
    return current if judge_id is None else {key: r for key, r in current.items() if key[1] == judge_id}
