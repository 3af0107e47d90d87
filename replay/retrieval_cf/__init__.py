"""Counterfactual retrieval (``p2w-rt replay RUN --retriever EMBEDDER``): a run's recorded history queries
searched again offline with another embedder, k or threshold, and the ground truth's recall compared."""

from replay.retrieval_cf._command import (
    CounterfactualOptions,
    CounterfactualReport,
    counterfactual_command,
    recall,
    totals,
)
from replay.retrieval_cf._pass import (
    COUNTERFACTUAL_RETRIEVAL,
    COUNTERFACTUALS,
    RETRIEVALS,
    CounterfactualOutcome,
    CounterfactualSummary,
)
from replay.retrieval_cf._producer import CounterfactualRetrieval, RetrievalConfig, RetrievalSettings

__all__ = [
    "COUNTERFACTUAL_RETRIEVAL",
    "COUNTERFACTUALS",
    "RETRIEVALS",
    "CounterfactualOptions",
    "CounterfactualOutcome",
    "CounterfactualReport",
    "CounterfactualRetrieval",
    "CounterfactualSummary",
    "RetrievalConfig",
    "RetrievalSettings",
    "counterfactual_command",
    "recall",
    "totals",
]
