"""Error classification: Persona2Web's error types and navigation end reasons per episode; see
docs/design/classification.md."""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2w_runtime.lazy import lazy_names

if TYPE_CHECKING:
    from p2w_rt.replay.classify._base import Classifier, ErrorLabels, UnknownClassifier, navigation_label
    from p2w_rt.replay.classify._command import ClassifyOptions, ClassifyReport, classify_runs, outcome_json
    from p2w_rt.replay.classify._hallucination import hallucination
    from p2w_rt.replay.classify._history_use import Target, history_use, targets
    from p2w_rt.replay.classify._labels import ALL_LABELS, HISTORY_RETRIEVAL_FAILURE
    from p2w_rt.replay.classify._llm import LlmClassifier
    from p2w_rt.replay.classify._plot import plot_summary
    from p2w_rt.replay.classify._records import (
        CLASSIFICATION_LABELS,
        ClassificationLabels,
        ClassificationRecord,
        LabelsRecord,
        classification_stream,
        current_classifications,
        read_classifications,
        read_labels,
    )
    from p2w_rt.replay.classify._redundant import redundant_access
    from p2w_rt.replay.classify._registry import CLASSIFIERS, PERSONA2WEB_ERRORS, ClassifyOutcome, ClassifySummary
    from p2w_rt.replay.classify._rules import RedundancySettings, RulesClassifier
    from p2w_rt.replay.classify._summary import ErrorSummary, summarize
    from p2w_rt.replay.classify._texts import entry_text

__all__ = [
    "ALL_LABELS",
    "CLASSIFIERS",
    "HISTORY_RETRIEVAL_FAILURE",
    "CLASSIFICATION_LABELS",
    "ClassificationLabels",
    "ClassificationRecord",
    "LabelsRecord",
    "PERSONA2WEB_ERRORS",
    "Target",
    "ClassifyOptions",
    "Classifier",
    "ClassifyOutcome",
    "ClassifyReport",
    "ClassifySummary",
    "ErrorSummary",
    "LlmClassifier",
    "RedundancySettings",
    "RulesClassifier",
    "UnknownClassifier",
    "ErrorLabels",
    "classification_stream",
    "classify_runs",
    "current_classifications",
    "read_labels",
    "entry_text",
    "hallucination",
    "history_use",
    "targets",
    "navigation_label",
    "outcome_json",
    "plot_summary",
    "read_classifications",
    "redundant_access",
    "summarize",
]

_MODULES = {
    "Classifier": "_base",
    "ErrorLabels": "_base",
    "UnknownClassifier": "_base",
    "navigation_label": "_base",
    "ClassifyOptions": "_command",
    "ClassifyReport": "_command",
    "classify_runs": "_command",
    "outcome_json": "_command",
    "hallucination": "_hallucination",
    "Target": "_history_use",
    "history_use": "_history_use",
    "targets": "_history_use",
    "ALL_LABELS": "_labels",
    "HISTORY_RETRIEVAL_FAILURE": "_labels",
    "LlmClassifier": "_llm",
    "plot_summary": "_plot",
    "CLASSIFICATION_LABELS": "_records",
    "ClassificationLabels": "_records",
    "ClassificationRecord": "_records",
    "LabelsRecord": "_records",
    "read_labels": "_records",
    "classification_stream": "_records",
    "current_classifications": "_records",
    "read_classifications": "_records",
    "RedundancySettings": "_rules",
    "redundant_access": "_redundant",
    "CLASSIFIERS": "_registry",
    "PERSONA2WEB_ERRORS": "_registry",
    "ClassifyOutcome": "_registry",
    "ClassifySummary": "_registry",
    "RulesClassifier": "_rules",
    "ErrorSummary": "_summary",
    "summarize": "_summary",
    "entry_text": "_texts",
}
"""Where each exported name lives; they load on first use: a ``classify`` pass imports no classifier it does not run,
a reader of classifications no classifier."""

__getattr__ = lazy_names(__name__, _MODULES, globals())
