"""The ``classifier`` family: where classifications live, how a classified episode and a pass's counts look, and
Persona2Web's classifiers as its plugin (``--classifier ID``), read with the rubric's site lists; the LLM
classifier is imported when it classifies.

Caching, appending and concurrency are ``replay.derived.run_pass``'s. A failed classification (an unusable
model answer) is appended with its calls and made again next time (``retries_failures``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from p2w_rt.replay.classify._base import Classifier, UnknownClassifier
from p2w_rt.replay.classify._records import CLASSIFICATIONS
from p2w_rt.replay.classify._rules import RulesClassifier
from p2w_rt.replay.derived import Deferred, Family, Outcome, PassSettings, Plugin, Tally, register, register_plugin
from p2w_rt.replay.persona2web import SITE_OPTIONS, site_settings
from p2w_rt.schemas import ErrorClassified


@dataclass(frozen=True, slots=True)
class ClassifyOutcome(Outcome[ErrorClassified]):
    @property
    def classification(self) -> ErrorClassified:
        return self.payload


@dataclass(slots=True)
class ClassifySummary(Tally[ClassifyOutcome]):
    run_id: str
    classifier_id: str

    @property
    def classified(self) -> int:
        return self.new


def _summary(run_id: str, classifiers: Sequence[Classifier[Any]]) -> ClassifySummary:
    return ClassifySummary(run_id, ",".join(c.id for c in classifiers))


CLASSIFIERS: Family[PassSettings, Classifier[Any], ClassifyOutcome, ClassifySummary] = register(
    Family(
        option="--classifier",
        unknown=UnknownClassifier,
        stream=CLASSIFICATIONS,
        outcome=ClassifyOutcome,
        summary=_summary,
        noun="classifications",
        retries_failures=True,
    )
)

PERSONA2WEB_ERRORS = register_plugin(
    Plugin(
        name="persona2web-errors",
        kind="classifier",
        producers=(RulesClassifier, Deferred(("llm",), "p2w_rt.replay.classify._llm:LlmClassifier")),
        settings=site_settings,
        options=SITE_OPTIONS,
        rank=0,
    )
)


def make_classifier(classifier_id: str, settings: PassSettings | None = None) -> Classifier[Any]:
    """The classifier registered as ``classifier_id``, configured from ``settings``."""
    return CLASSIFIERS.make(classifier_id, settings or PassSettings())
