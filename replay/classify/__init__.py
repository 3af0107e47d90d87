"""Error classification: Persona2Web's error types and navigation end reasons per episode; see
docs/design/classification.md."""

from replay.classify._base import Classifier, ErrorLabels, UnknownClassifier, navigation_label
from replay.classify._command import ClassifyOptions, classify_runs, outcome_json
from replay.classify._hallucination import Constraint, applied_constraints, hallucination
from replay.classify._history_use import Target, history_use, targets
from replay.classify._labels import (
    ALL_LABELS,
    DEFINITIONS,
    HISTORY_RETRIEVAL_FAILURE,
    HISTORY_UTILIZATION_FAILURE,
    NAVIGATION_LABELS,
    PERSONALIZATION_HALLUCINATION,
    PERSONALIZATION_LABELS,
    REDUNDANT_HISTORY_ACCESS,
)
from replay.classify._llm import DEFAULT_CLASSIFIER_MODEL, LlmClassifier
from replay.classify._plot import PlotError, plot_summary
from replay.classify._records import ClassificationRecord, classification_stream, read_classifications
from replay.classify._redundant import RedundancySettings, redundant_access
from replay.classify._registry import (
    CLASSIFIERS,
    PERSONA2WEB_ERRORS,
    ClassifyAborted,
    ClassifyOutcome,
    ClassifySummary,
    make_classifier,
)
from replay.classify._rules import RulesClassifier, RulesConfig
from replay.classify._summary import ErrorSummary, SummaryRow, summarize

__all__ = [
    "ALL_LABELS",
    "CLASSIFIERS",
    "DEFAULT_CLASSIFIER_MODEL",
    "DEFINITIONS",
    "HISTORY_RETRIEVAL_FAILURE",
    "HISTORY_UTILIZATION_FAILURE",
    "NAVIGATION_LABELS",
    "PERSONA2WEB_ERRORS",
    "PERSONALIZATION_HALLUCINATION",
    "PERSONALIZATION_LABELS",
    "REDUNDANT_HISTORY_ACCESS",
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
    "PlotError",
    "RedundancySettings",
    "RulesClassifier",
    "RulesConfig",
    "SummaryRow",
    "UnknownClassifier",
    "ErrorLabels",
    "applied_constraints",
    "classification_stream",
    "classify_runs",
    "hallucination",
    "history_use",
    "targets",
    "make_classifier",
    "navigation_label",
    "outcome_json",
    "plot_summary",
    "read_classifications",
    "redundant_access",
    "summarize",
]
