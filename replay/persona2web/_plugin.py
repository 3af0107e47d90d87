"""The Persona2Web rubric as a plugin of the ``judge`` family: its rules and LLM judges (imported when one of them
judges), read with its site lists (``SiteSettings``) and their options."""

from p2w_rt.replay.derived import Deferred, Plugin, register_plugin
from p2w_rt.replay.persona2web._rules import ActionWiseRulesJudge, OutcomeBasedRulesJudge, RubricRulesJudge
from p2w_rt.replay.persona2web._sites import SITE_OPTIONS, site_settings

_LLM = "p2w_rt.replay.persona2web._llm"

PERSONA2WEB = register_plugin(
    Plugin(
        name="persona2web-rubric",
        rank=0,
        kind="judge",
        producers=(
            RubricRulesJudge,
            Deferred(("rubric-llm",), f"{_LLM}:RubricLlmJudge"),
            Deferred(("action-wise",), f"{_LLM}:ActionWiseLlmJudge"),
            Deferred(("outcome-based",), f"{_LLM}:OutcomeBasedLlmJudge"),
            ActionWiseRulesJudge,
            OutcomeBasedRulesJudge,
        ),
        settings=site_settings,
        options=SITE_OPTIONS,
    )
)
