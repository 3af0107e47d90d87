"""Persona2Web's reasoning-aware rubric (P_web, P_pref, Intent, SR) and its two meta-evaluation baselines, as a
plugin of the ``judge`` family (``PERSONA2WEB``), with the site lists they read (``SiteSettings``, from
``--location-site``, ``--site-alias``, ``--site-alias-file``) and the rubric's targets, which the error classifiers
and the retrieval counterfactual share; see docs/design/judges.md."""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2w_runtime.lazy import lazy_names

if TYPE_CHECKING:
    from p2w_rt.replay.persona2web._candidates import reasoned_steps
    from p2w_rt.replay.persona2web._goal import goal_of
    from p2w_rt.replay.persona2web._llm import ActionWiseLlmJudge, OutcomeBasedLlmJudge, RubricLlmJudge
    from p2w_rt.replay.persona2web._plugin import PERSONA2WEB
    from p2w_rt.replay.persona2web._render import render_full
    from p2w_rt.replay.persona2web._rules import ActionWiseRulesJudge, OutcomeBasedRulesJudge, RubricRulesJudge
    from p2w_rt.replay.persona2web._sites import (
        DEMO_LOCATION_SITES,
        SITE_OPTIONS,
        LlmSiteConfig,
        SiteConfig,
        SiteSettings,
        default_location_sites,
        site_fields,
        site_settings,
    )
    from p2w_rt.replay.persona2web._targets import SiteLists, rubric_metrics, rubric_targets

__all__ = [
    "DEMO_LOCATION_SITES",
    "PERSONA2WEB",
    "SITE_OPTIONS",
    "ActionWiseLlmJudge",
    "ActionWiseRulesJudge",
    "LlmSiteConfig",
    "OutcomeBasedLlmJudge",
    "OutcomeBasedRulesJudge",
    "RubricLlmJudge",
    "RubricRulesJudge",
    "SiteConfig",
    "SiteLists",
    "SiteSettings",
    "default_location_sites",
    "goal_of",
    "reasoned_steps",
    "render_full",
    "rubric_metrics",
    "rubric_targets",
    "site_fields",
    "site_settings",
]

_MODULES = {
    "reasoned_steps": "_candidates",
    "goal_of": "_goal",
    "ActionWiseLlmJudge": "_llm",
    "OutcomeBasedLlmJudge": "_llm",
    "RubricLlmJudge": "_llm",
    "PERSONA2WEB": "_plugin",
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
"""Where each exported name lives; they load on first use (the classifiers read the site lists without the judges)."""

__getattr__ = lazy_names(__name__, _MODULES, globals())
