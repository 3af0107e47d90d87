"""The Persona2Web rubric as a plugin of the ``judge`` family: its rules and LLM judges, read with its site
lists (``SiteSettings``) and their options."""

from p2w_rt.replay.derived import Plugin, register_plugin
from p2w_rt.replay.persona2web._llm import ActionWiseLlmJudge, OutcomeBasedLlmJudge, RubricLlmJudge
from p2w_rt.replay.persona2web._rules import ActionWiseRulesJudge, OutcomeBasedRulesJudge, RubricRulesJudge
from p2w_rt.replay.persona2web._sites import SITE_OPTIONS, site_settings

PERSONA2WEB = register_plugin(
    Plugin(
        name="persona2web-rubric",
        rank=0,
        kind="judge",
        producers=(
            RubricRulesJudge,
            RubricLlmJudge,
            ActionWiseLlmJudge,
            OutcomeBasedLlmJudge,
            ActionWiseRulesJudge,
            OutcomeBasedRulesJudge,
        ),
        settings=site_settings,
        options=SITE_OPTIONS,
    )
)
