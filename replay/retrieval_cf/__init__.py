"""Counterfactual retrieval (``p2w-rt replay RUN --retriever EMBEDDER``): a run's recorded history queries
searched again offline with another embedder, k or threshold, and the ground truth's recall compared."""

from replay.retrieval_cf._command import CounterfactualOptions, counterfactual_command, recall, totals
from replay.retrieval_cf._pass import COUNTERFACTUALS, CounterfactualOutcome, CounterfactualSummary, counterfactual_run
from replay.retrieval_cf._producer import PRODUCER_ID, CounterfactualRetrieval

__all__ = [
    "COUNTERFACTUALS",
    "PRODUCER_ID",
    "CounterfactualOptions",
    "CounterfactualOutcome",
    "CounterfactualRetrieval",
    "CounterfactualSummary",
    "counterfactual_command",
    "counterfactual_run",
    "recall",
    "totals",
]
