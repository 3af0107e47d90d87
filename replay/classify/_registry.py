"""Classifiers by id, as ``--classifier`` names them: the ``classifier`` family of the producer registry."""

from __future__ import annotations

from replay.classify._base import Classifier, UnknownClassifier
from replay.classify._llm import LlmClassifier
from replay.classify._rules import RulesClassifier
from replay.derived import Family, JudgeSettings, register

CLASSIFIERS: Family[JudgeSettings, Classifier] = register(
    Family(
        kind="classifier",
        option="--classifier",
        producers=(RulesClassifier, LlmClassifier),
        unknown=UnknownClassifier,
    )
)


def make_classifier(classifier_id: str, settings: JudgeSettings | None = None) -> Classifier:
    """The classifier registered as ``classifier_id``, configured from ``settings``."""
    return CLASSIFIERS.make(classifier_id, settings or JudgeSettings())
