"""Counterfactual retrieval (``p2w-rt replay RUN --retriever EMBEDDER``): a run's recorded history queries
searched again offline with another embedder, k or threshold, and the ground truth's recall compared."""

from p2w_rt.replay.retrieval_cf._command import (
    CounterfactualOptions,
    CounterfactualReport,
    counterfactual_runs,
    recall,
    totals,
)
from p2w_rt.replay.retrieval_cf._pass import RETRIEVALS, CounterfactualSummary
from p2w_rt.replay.retrieval_cf._producer import CounterfactualRetrieval, RetrievalSettings

__all__ = [
    "RETRIEVALS",
    "CounterfactualOptions",
    "CounterfactualReport",
    "CounterfactualRetrieval",
    "CounterfactualSummary",
    "RetrievalSettings",
    "counterfactual_runs",
    "recall",
    "totals",
]
