"""Judges: each an id and a version, chosen with ``--judge ID``; see docs/design/judges.md."""

from replay.derived import Family, register
from replay.derived._settings import DEFAULT_JUDGE_MODEL, DEFAULT_LOCATION_SITES, JudgeSettings, default_location_sites
from replay.judges._base import (
    CallEstimate,
    Judge,
    JudgeContext,
    JudgeError,
    LlmConfig,
    LlmSiteConfig,
    SiteConfig,
    UnknownJudge,
    Verdict,
    llm_fields,
    site_fields,
)
from replay.judges._goal import Goal, GoalKind, goal_of
from replay.judges._llm import ActionWiseLlmJudge, OutcomeBasedLlmJudge, RubricLlmJudge
from replay.judges._rules import ActionWiseRulesJudge, OutcomeBasedRulesJudge, RubricRulesJudge
from replay.judges._targets import RubricTargets, SiteLists, rubric_metrics, rubric_targets
from replay.judges._webarena import WebArenaJudge

from replay.agenticshop._judges import SHOP_JUDGES  # isort: skip - its judges build on replay.judges._base

JUDGES: Family[JudgeSettings, Judge] = register(
    Family(
        kind="judge",
        option="--judge",
        producers=(
            RubricRulesJudge,
            RubricLlmJudge,
            ActionWiseLlmJudge,
            OutcomeBasedLlmJudge,
            ActionWiseRulesJudge,
            OutcomeBasedRulesJudge,
            WebArenaJudge,
            *SHOP_JUDGES,
        ),
        unknown=UnknownJudge,
    )
)
"""Every judge, in the order ``--help`` lists them."""


def make_judge(judge_id: str, settings: JudgeSettings) -> Judge:
    """The judge registered as ``judge_id``, configured; ``UnknownJudge`` lists the known ids."""
    return JUDGES.make(judge_id, settings)


__all__ = [
    "DEFAULT_JUDGE_MODEL",
    "DEFAULT_LOCATION_SITES",
    "JUDGES",
    "ActionWiseLlmJudge",
    "ActionWiseRulesJudge",
    "CallEstimate",
    "Goal",
    "GoalKind",
    "Judge",
    "JudgeContext",
    "JudgeError",
    "JudgeSettings",
    "OutcomeBasedLlmJudge",
    "OutcomeBasedRulesJudge",
    "RubricLlmJudge",
    "RubricRulesJudge",
    "RubricTargets",
    "SiteLists",
    "LlmConfig",
    "LlmSiteConfig",
    "SiteConfig",
    "llm_fields",
    "site_fields",
    "UnknownJudge",
    "Verdict",
    "WebArenaJudge",
    "default_location_sites",
    "goal_of",
    "make_judge",
    "rubric_metrics",
    "rubric_targets",
]
