"""Classifiers by id, as ``--classifier`` names them."""

from __future__ import annotations

from replay.classify._base import Classifier, UnknownClassifier
from replay.classify._llm import LlmClassifier
from replay.classify._rules import RulesClassifier
from replay.derived import LlmFactory
from replay.judges import JudgeSettings

CLASSIFIERS: tuple[str, ...] = (RulesClassifier.id, LlmClassifier.id)


def make_classifier(
    classifier_id: str, settings: JudgeSettings | None = None, llm: LlmFactory | None = None
) -> Classifier:
    """The classifier registered as ``classifier_id``; ``llm`` builds the client the ``llm`` classifier needs."""
    if classifier_id == RulesClassifier.id:
        return RulesClassifier(settings)
    if classifier_id == LlmClassifier.id:
        if llm is None:
            raise UnknownClassifier("the llm classifier needs an LLM endpoint (--model / --base-url)")
        return LlmClassifier(llm, settings)
    raise UnknownClassifier(f"unknown classifier {classifier_id!r}; known classifiers: {', '.join(CLASSIFIERS)}")
