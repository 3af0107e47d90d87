"""Error classification: Persona2Web's error types and navigation end reasons per episode; see
docs/design/classification.md."""

from replay.classify._base import Classifier, ErrorLabels, UnknownClassifier, navigation_label
from replay.classify._command import ClassifyOptions, classify_runs, outcome_json
from replay.classify._hallucination import Constraint, applied_constraints, hallucination
from replay.classify._history_use import Target, history_use, targets
from replay.classify._labels import ALL_LABELS, HISTORY_RETRIEVAL_FAILURE
from replay.classify._llm import LlmClassifier
from replay.classify._plot import plot_summary
from replay.classify._records import (
    ClassificationRecord,
    classification_stream,
    current_classifications,
    read_classifications,
)
from replay.classify._redundant import RedundancySettings, redundant_access
from replay.classify._registry import CLASSIFIERS, ClassifyAborted, ClassifyOutcome, ClassifySummary
from replay.classify._rules import RulesClassifier
from replay.classify._summary import ErrorSummary, summarize
from replay.classify._texts import entry_text

__all__ = [
    "ALL_LABELS",
    "CLASSIFIERS",
    "HISTORY_RETRIEVAL_FAILURE",
    "ClassificationRecord",
    "Target",
    "ClassifyOptions",
    "Classifier",
    "ClassifyAborted",
    "ClassifyOutcome",
    "ClassifySummary",
    "Constraint",
    "ErrorSummary",
    "LlmClassifier",
    "RedundancySettings",
    "RulesClassifier",
    "UnknownClassifier",
    "ErrorLabels",
    "applied_constraints",
    "classification_stream",
    "classify_runs",
    "current_classifications",
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
