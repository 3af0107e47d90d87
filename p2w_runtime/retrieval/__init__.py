"""History retrieval: sentence-transformers embeddings of ``"{type}: {object}"`` in a cached FAISS index.

Usable without a store; ``retrieval_events`` records a search as the events the agent writes.
"""

from p2w_runtime.retrieval._build import IndexSummary, index_history
from p2w_runtime.retrieval._cache import index_hash
from p2w_runtime.retrieval._embedder import load_embedder
from p2w_runtime.retrieval._errors import RetrievalError
from p2w_runtime.retrieval._events import retrieval_events
from p2w_runtime.retrieval._index import DEFAULT_K, DEFAULT_THRESHOLD, HistoryIndex, SearchHit
from p2w_runtime.retrieval._order import SCORE_TOLERANCE, ranked, same_hits, tie_groups
from p2w_runtime.retrieval._retriever import HistoryRetriever

__all__ = [
    "DEFAULT_K",
    "DEFAULT_THRESHOLD",
    "HistoryIndex",
    "HistoryRetriever",
    "IndexSummary",
    "SCORE_TOLERANCE",
    "RetrievalError",
    "SearchHit",
    "index_hash",
    "index_history",
    "load_embedder",
    "ranked",
    "retrieval_events",
    "same_hits",
    "tie_groups",
]
