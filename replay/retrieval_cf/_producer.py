"""Counterfactual retrieval of one episode: its recorded history queries searched again with another retriever.

Shaped like a judge or classifier (id, version, ``config()``, one result per trajectory) so that it can join
the common producer base of ``replay.derived``. The ground-truth values and how a text states them are the
history-use classifier's (``targets``): the same value matching the judges use.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from p2w_runtime.retrieval import HistoryRetriever, SearchHit
from replay.classify import HISTORY_RETRIEVAL_FAILURE, history_use
from replay.classify._history_use import Target, targets
from replay.judges import JudgeSettings
from replay.trajectory import Trajectory
from schemas import MemoryEntry, RetrievalCounterfactual, TargetRecall, content_hash

PRODUCER_ID = "counterfactual-retrieval"


class CounterfactualRetrieval:
    id = PRODUCER_ID
    version = "1"
    """Bump when the result for the same trajectory and retriever can change."""

    def __init__(self, retriever: HistoryRetriever, k: int, threshold: float, settings: JudgeSettings) -> None:
        self.retriever = retriever
        self.k = k
        self.threshold = threshold
        self.settings = settings

    def config(self) -> dict[str, Any]:
        embedder = self.retriever.embedder
        return {
            "model_id": embedder.model_id,
            "model_fingerprint": embedder.fingerprint,
            "k": self.k,
            "threshold": self.threshold,
            "location_sites": list(self.settings.location_sites),
            "site_aliases": {name: list(t) for name, t in sorted(self.settings.site_aliases.items())},
        }

    def config_hash(self) -> str:
        return content_hash(self.config())

    def evaluate(self, t: Trajectory) -> RetrievalCounterfactual:
        """Search every recorded query again (blocking: encodes queries); ``status=failed`` without ground truth."""
        wanted = targets(t, self.settings)
        base: dict[str, Any] = {
            "episode_stream": t.stream,
            "task_id": t.task_id,
            "trajectory_hash": t.hash,
            "producer_id": self.id,
            "producer_version": self.version,
            "config_hash": self.config_hash(),
            "retriever": {"model_id": self.retriever.embedder.model_id, "k": self.k, "threshold": self.threshold},
        }
        if wanted is None:
            return RetrievalCounterfactual(**base, status="failed", error=f"episode {t.stream} has no ground truth")
        recorded_entries: list[MemoryEntry] = []
        found_entries: list[MemoryEntry] = []
        queries = gained = lost = 0
        index = self.retriever.index(t.persona) if any(a.retrievals for a in t.history) else None
        for access in t.history:
            for retrieval in access.retrievals:
                assert index is not None
                found: list[SearchHit] = index.search(retrieval.query, self.k, self.threshold)
                queries += 1
                before = {hit.entry_id for hit in retrieval.hits}
                after = {hit.entry_id for hit in found}
                gained, lost = gained + len(after - before), lost + len(before - after)
                recorded_entries += [hit.entry for hit in retrieval.hits]
                found_entries += [hit.entry for hit in found]
        recalls = [_recall(target, t.query, recorded_entries, found_entries) for target in wanted]
        # The classifier's label also counts memory answers, which a counterfactual retrieval would change
        # unseen: it is removed when the counterfactual entries state every missing value, and added when the
        # recorded entries stated them all and the counterfactual ones do not (docs/design/rerun.md).
        labelled = any(label.label == HISTORY_RETRIEVAL_FAILURE for label in history_use(t, self.settings))
        missed_before = any(not r.stated_in_query and not r.recorded for r in recalls)
        missed_after = any(not r.stated_in_query and not r.counterfactual for r in recalls)
        return RetrievalCounterfactual(
            **base,
            queries=queries,
            targets=recalls,
            hits_recorded=len(recorded_entries),
            hits_counterfactual=len(found_entries),
            hits_gained=gained,
            hits_lost=lost,
            labels_removed=[HISTORY_RETRIEVAL_FAILURE] if labelled and not missed_after else [],
            labels_added=[HISTORY_RETRIEVAL_FAILURE] if missed_after and not missed_before else [],
        )


def _recall(target: Target, query: str, recorded: Sequence[MemoryEntry], found: Sequence[MemoryEntry]) -> TargetRecall:
    return TargetRecall(
        name=target.name,
        stated_in_query=target.in_text(query) is not None,
        recorded=_states(target, recorded),
        counterfactual=_states(target, found),
    )


def _states(target: Target, entries: Sequence[MemoryEntry]) -> bool:
    """Whether an entry states the value, read as the classifier reads retrieved entries (with their website)."""
    for entry in entries:
        text = f"{entry.key_text()} ({entry.website})" if entry.website else entry.key_text()
        if target.in_text(text) is not None:
            return True
    return False
