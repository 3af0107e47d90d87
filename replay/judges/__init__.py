"""Judges: each an id and a version, chosen with ``--judge ID``; see docs/design/judges.md."""

from replay.agenticshop._judges import SHOP_JUDGES
from replay.judges._base import (
    DEFAULT_JUDGE_MODEL,
    DEFAULT_LOCATION_SITES,
    CallEstimate,
    Judge,
    JudgeContext,
    JudgeError,
    JudgeSettings,
    UnknownJudge,
    Verdict,
    default_location_sites,
)
from replay.judges._llm import ActionWiseLlmJudge, OutcomeBasedLlmJudge, RubricLlmJudge
from replay.judges._rules import ActionWiseRulesJudge, OutcomeBasedRulesJudge, RubricRulesJudge
from replay.judges._targets import RubricTargets, rubric_metrics, rubric_targets
from replay.judges._webarena import WebArenaJudge

JUDGES: dict[str, type[Judge]] = {
    cls.id: cls
    for cls in (
        RubricRulesJudge,
        RubricLlmJudge,
        ActionWiseLlmJudge,
        OutcomeBasedLlmJudge,
        ActionWiseRulesJudge,
        OutcomeBasedRulesJudge,
        WebArenaJudge,
        *SHOP_JUDGES,
    )
}
"""Every judge by id, in the order ``--help`` lists them."""


def make_judge(judge_id: str, settings: JudgeSettings) -> Judge:
    """The judge registered as ``judge_id``, configured; ``UnknownJudge`` lists the known ids."""
    try:
        cls = JUDGES[judge_id]
    except KeyError:
        raise UnknownJudge(f"unknown judge {judge_id!r}; known judges: {', '.join(JUDGES)}") from None
    return cls(settings)


__all__ = [
    "DEFAULT_JUDGE_MODEL",
    "DEFAULT_LOCATION_SITES",
    "JUDGES",
    "ActionWiseLlmJudge",
    "ActionWiseRulesJudge",
    "CallEstimate",
    "Judge",
    "JudgeContext",
    "JudgeError",
    "JudgeSettings",
    "OutcomeBasedLlmJudge",
    "OutcomeBasedRulesJudge",
    "RubricLlmJudge",
    "RubricRulesJudge",
    "RubricTargets",
    "UnknownJudge",
    "Verdict",
    "WebArenaJudge",
    "default_location_sites",
    "make_judge",
    "rubric_metrics",
    "rubric_targets",
]
