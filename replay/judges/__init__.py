"""Judges: the ``judge`` family (judgments, their stream, estimates) and the Persona2Web rubric, its first plugin;
each judge an id and a version, chosen with ``--judge ID``. Other benchmarks add theirs as plugins
(``replay.webarena``, ``replay.agenticshop``); see docs/design/judges.md."""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2w_runtime.lazy import lazy_names

if TYPE_CHECKING:
    from p2w_rt.replay.judges._base import (
        CallEstimate,
        Judge,
        JudgeContext,
        JudgeError,
        LlmConfig,
        Scorecard,
        llm_fields,
    )
    from p2w_rt.replay.judges._candidates import reasoned_steps
    from p2w_rt.replay.judges._command import JudgeOptions, JudgeReport, judge_runs
    from p2w_rt.replay.judges._estimate import JudgeEstimate, estimate_replay
    from p2w_rt.replay.judges._family import JUDGES, JudgeOutcome, JudgeSummary, ReplayAborted, make_judge
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
    "JudgeOptions",
    "JudgeReport",
    "JudgeSummary",
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
    "judge_runs",
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

_MODULES = {
    "CallEstimate": "_base",
    "Judge": "_base",
    "JudgeContext": "_base",
    "JudgeError": "_base",
    "LlmConfig": "_base",
    "Scorecard": "_base",
    "llm_fields": "_base",
    "reasoned_steps": "_candidates",
    "JudgeOptions": "_command",
    "JudgeReport": "_command",
    "judge_runs": "_command",
    "JudgeEstimate": "_estimate",
    "estimate_replay": "_estimate",
    "JUDGES": "_family",
    "JudgeOutcome": "_family",
    "ReplayAborted": "_family",
    "JudgeSummary": "_family",
    "make_judge": "_family",
    "goal_of": "_goal",
    "ActionWiseLlmJudge": "_llm",
    "OutcomeBasedLlmJudge": "_llm",
    "RubricLlmJudge": "_llm",
    "PERSONA2WEB": "_persona2web",
    "template_hash": "_prompts",
    "JudgmentRecord": "_records",
    "current_judgments": "_records",
    "episode_judgments": "_records",
    "judgment_stream": "_records",
    "read_judgments": "_records",
    "render_full": "_render",
    "ActionWiseRulesJudge": "_rules",
    "OutcomeBasedRulesJudge": "_rules",
    "RubricRulesJudge": "_rules",
    "DEMO_LOCATION_SITES": "_sites",
    "SITE_OPTIONS": "_sites",
    "LlmSiteConfig": "_sites",
    "SiteConfig": "_sites",
    "SiteSettings": "_sites",
    "default_location_sites": "_sites",
    "site_fields": "_sites",
    "site_settings": "_sites",
    "SiteLists": "_targets",
    "rubric_metrics": "_targets",
    "rubric_targets": "_targets",
}
"""Where each exported name lives; they load on first use (``metrics`` reads judgments and loads no judge)."""

__getattr__ = lazy_names(__name__, _MODULES, globals())
