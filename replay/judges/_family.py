"""The ``judge`` family: where judgments live, how a judged episode and a pass's counts look, and its registration
(``replay.derived.register``); the judges themselves come from plugins.

Caching, retrying failures, appending and concurrency are ``replay.derived.run_pass``'s: a cached failure is
reported every pass and re-judged only with ``retry_failed`` (LLM failures can be transient; re-judging them by
default would pay for them again on every pass).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from p2w_rt.replay.derived import Family, Outcome, PassSettings, Tally, register
from p2w_rt.replay.judges._base import Judge, UnknownJudge
from p2w_rt.replay.judges._records import JUDGMENTS
from p2w_rt.schemas import Judgment


@dataclass(frozen=True, slots=True)
class JudgeOutcome(Outcome[Judgment]):
    @property
    def judgment(self) -> Judgment:
        return self.payload


@dataclass(slots=True)
class JudgeSummary(Tally[JudgeOutcome]):
    @property
    def judged(self) -> int:
        return self.new

    @property
    def cost_usd(self) -> float:
        """What this pass paid: the judgments it made, failed ones included."""
        return sum((o.judgment.cost_usd for o in self.outcomes if not o.cached and o.judgment.cost_usd), 0.0)


def _summary(run_id: str, judges: Sequence[Judge[Any]]) -> JudgeSummary:
    return JudgeSummary()


JUDGES: Family[PassSettings, Judge[Any], JudgeOutcome, JudgeSummary] = register(
    Family(
        option="--judge",
        unknown=UnknownJudge,
        stream=JUDGMENTS,
        outcome=JudgeOutcome,
        summary=_summary,
        noun="judgments",
    )
)
"""Every judge of every plugin, in the order ``--help`` lists them."""


def make_judge(judge_id: str, settings: PassSettings) -> Judge[Any]:
    """The judge registered as ``judge_id``, configured; ``UnknownJudge`` lists the known ids."""
    return JUDGES.make(judge_id, settings)
