"""Error classification: Persona2Web's error types and navigation end reasons per episode; see
docs/design/classification.md."""

from p2w_rt.replay.classify._base import Classifier, ErrorLabels, UnknownClassifier, navigation_label
from p2w_rt.replay.classify._command import ClassifyOptions, ClassifyReport, classify_runs, outcome_json
from p2w_rt.replay.classify._hallucination import hallucination
from p2w_rt.replay.classify._history_use import Target, history_use, targets
from p2w_rt.replay.classify._labels import ALL_LABELS, HISTORY_RETRIEVAL_FAILURE
from p2w_rt.replay.classify._llm import LlmClassifier
from p2w_rt.replay.classify._plot import plot_summary
from p2w_rt.replay.classify._records import (
    ClassificationRecord,
    classification_stream,
    current_classifications,
    read_classifications,
)
from p2w_rt.replay.classify._redundant import RedundancySettings, redundant_access
from p2w_rt.replay.classify._registry import CLASSIFIERS, ClassifyOutcome, ClassifySummary
from p2w_rt.replay.classify._rules import RulesClassifier
from p2w_rt.replay.classify._summary import ErrorSummary, summarize
from p2w_rt.replay.classify._texts import entry_text

__all__ = [
    "ALL_LABELS",
    "CLASSIFIERS",
    "HISTORY_RETRIEVAL_FAILURE",
    "ClassificationRecord",
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
