"""Judges: the ``judge`` family (judgments, their stream, estimates) and the Persona2Web rubric, its first plugin;
each judge an id and a version, chosen with ``--judge ID``. Other benchmarks add theirs as plugins
(``replay.webarena``, ``replay.agenticshop``); see docs/design/judges.md."""

from p2w_rt.replay.judges._base import CallEstimate, Judge, JudgeContext, JudgeError, LlmConfig, Scorecard, llm_fields
from p2w_rt.replay.judges._candidates import reasoned_steps
from p2w_rt.replay.judges._command import ReplayOptions
from p2w_rt.replay.judges._estimate import JudgeEstimate, estimate_replay
from p2w_rt.replay.judges._family import JUDGES, JudgeOutcome, ReplayAborted, ReplaySummary, make_judge
from p2w_rt.replay.judges._goal import goal_of
from p2w_rt.replay.judges._llm import ActionWiseLlmJudge, OutcomeBasedLlmJudge, RubricLlmJudge
from p2w_rt.replay.judges._persona2web import PERSONA2WEB
from p2w_rt.replay.judges._prompts import template_hash
from p2w_rt.replay.judges._records import (
    JudgmentRecord,
    current_judgments,
    episode_judgments,
    judgment_stream,
    read_judgments,
)
from p2w_rt.replay.judges._render import render_full
from p2w_rt.replay.judges._rules import ActionWiseRulesJudge, OutcomeBasedRulesJudge, RubricRulesJudge
from p2w_rt.replay.judges._sites import (
    DEMO_LOCATION_SITES,
    SITE_OPTIONS,
    LlmSiteConfig,
    SiteConfig,
    SiteSettings,
    default_location_sites,
    site_fields,
    site_settings,
)
from p2w_rt.replay.judges._targets import SiteLists, rubric_metrics, rubric_targets

__all__ = [
    "DEMO_LOCATION_SITES",
    "JUDGES",
    "PERSONA2WEB",
    "SITE_OPTIONS",
    "ActionWiseLlmJudge",
    "ActionWiseRulesJudge",
    "CallEstimate",
    "Judge",
    "JudgeContext",
    "JudgeError",
    "JudgeEstimate",
    "JudgeOutcome",
    "JudgmentRecord",
    "LlmConfig",
    "LlmSiteConfig",
    "OutcomeBasedLlmJudge",
    "OutcomeBasedRulesJudge",
    "ReplayAborted",
    "ReplayOptions",
    "ReplaySummary",
    "RubricLlmJudge",
    "RubricRulesJudge",
    "Scorecard",
    "SiteConfig",
    "SiteLists",
    "SiteSettings",
    "current_judgments",
    "default_location_sites",
    "episode_judgments",
    "estimate_replay",
    "goal_of",
    "judgment_stream",
    "llm_fields",
    "make_judge",
    "read_judgments",
    "render_full",
    "rubric_metrics",
    "reasoned_steps",
    "rubric_targets",
    "site_fields",
    "site_settings",
    "template_hash",
]
