"""The Persona2Web rubric as a plugin of the ``judge`` family: its rules and LLM judges (each module imported when one
of its judges judges), read with its site lists (``SiteSettings``) and their options."""

from p2w_rt.replay.derived import Deferred, Plugin, register_plugin
from p2w_rt.replay.persona2web._sites import SITE_OPTIONS, site_settings

_LLM = "p2w_rt.replay.persona2web._llm"
_RULES = "p2w_rt.replay.persona2web._rules"

PERSONA2WEB = register_plugin(
    Plugin(
        name="persona2web-rubric",
        rank=0,
        kind="judge",
        producers=(
            Deferred(("rubric-rules",), f"{_RULES}:RubricRulesJudge"),
            Deferred(("rubric-llm",), f"{_LLM}:RubricLlmJudge"),
            Deferred(("action-wise",), f"{_LLM}:ActionWiseLlmJudge"),
            Deferred(("outcome-based",), f"{_LLM}:OutcomeBasedLlmJudge"),
            Deferred(("action-wise-rules",), f"{_RULES}:ActionWiseRulesJudge"),
            Deferred(("outcome-based-rules",), f"{_RULES}:OutcomeBasedRulesJudge"),
        ),
        settings=site_settings,
        options=SITE_OPTIONS,
    )
)
