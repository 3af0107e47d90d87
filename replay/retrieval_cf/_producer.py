"""Counterfactual retrieval of one episode: its recorded history queries searched again with another retriever.

A producer of the ``retrieval`` family on the ``replay.derived`` base: its config holds every setting the
result depends on (the embedder and its fingerprint, k, threshold, the memory banks' content, the site lists
the ground-truth values are read with), all hashed into the cache key. The ground-truth values and how a text
states them are the history-use classifier's (``targets``): the same value matching the judges use.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from p2w_rt.replay.classify import HISTORY_RETRIEVAL_FAILURE, Target, history_use, targets
from p2w_rt.replay.derived import CacheKey, PassSettings, ProduceContext, Producer, ProducerError
from p2w_rt.replay.persona2web import SiteConfig, site_fields
from p2w_rt.schemas import MemoryEntry, RetrievalCounterfactual, TargetRecall, content_hash
from p2w_runtime.data import DataError
from p2w_runtime.domain.trajectory import RetrievedEntry, Trajectory
from p2w_runtime.errors import UserError
from p2w_runtime.retrieval import DEFAULT_K, DEFAULT_THRESHOLD, HistoryRetriever, SearchHit


@dataclass(frozen=True)
class RetrievalSettings:
    """What a user sets for a counterfactual pass: the retriever to search with, and the site lists."""

    retriever: HistoryRetriever
    k: int = DEFAULT_K
    threshold: float = DEFAULT_THRESHOLD
    sites: PassSettings = field(default_factory=PassSettings)


class RetrievalConfig(SiteConfig):
    model_id: str
    model_fingerprint: str
    """Hash of the weights as ``run.started`` names them (``EmbedderRef``): the same on every machine, unlike the
    index cache's key (the files' mtimes)."""
    k: int
    threshold: float
    history: str
    """Content hash of the memory-bank files: another bank is another result."""


@dataclass(frozen=True, slots=True)
class RecallVerdict:
    """One episode's recorded vs counterfactual retrieval (``status=failed`` with ``error`` when not evaluated)."""

    status: str = "ok"
    error: str | None = None
    queries: int = 0
    targets: list[TargetRecall] = field(default_factory=list)
    hits_recorded: int = 0
    hits_counterfactual: int = 0
    hits_gained: int = 0
    hits_lost: int = 0
    labels_removed: list[str] = field(default_factory=list)
    labels_added: list[str] = field(default_factory=list)


class UnknownRetrieval(UserError):
    """No counterfactual producer by that id."""


class CounterfactualRetrieval(Producer[RetrievalSettings, RetrievalConfig, RecallVerdict]):
    kind = "retrieval"
    id = "counterfactual-retrieval"
    version = "1"
    """Bump when the result for the same trajectory and config can change."""
    description = "recorded history queries searched again; ground-truth recall recorded vs counterfactual"

    def __init__(self, settings: RetrievalSettings) -> None:
        self.retriever = settings.retriever
        super().__init__(settings)

    def configure(self, settings: RetrievalSettings) -> RetrievalConfig:
        embedder = settings.retriever.embedder
        return RetrievalConfig.model_validate(
            {
                **site_fields(settings.sites),
                "model_id": embedder.model_id,
                "model_fingerprint": content_hash(embedder.ref.model_dump()),
                "k": settings.k,
                "threshold": settings.threshold,
                "history": settings.retriever.banks.content_hash(),
            }
        )

    async def produce(self, trajectory: Trajectory, ctx: ProduceContext) -> RecallVerdict:
        return await asyncio.to_thread(self.evaluate, trajectory)  # encodes queries: blocking

    def evaluate(self, t: Trajectory) -> RecallVerdict:
        """Search every recorded query again; ``ProducerError`` without ground truth."""
        wanted = targets(t, self.config)
        if wanted is None:
            raise ProducerError(f"episode {t.stream} has no ground truth")
        recorded_entries: list[RetrievedEntry] = []
        found_entries: list[MemoryEntry] = []
        queries = gained = lost = 0
        try:
            index = self.retriever.index(t.persona) if any(a.retrievals for a in t.history) else None
        except DataError as exc:  # no bank for this persona, or a bad one: this episode cannot be evaluated
            raise ProducerError(str(exc)) from None
        for access in t.history:
            for retrieval in access.retrievals:
                assert index is not None
                found: list[SearchHit] = index.search(retrieval.query, self.config.k, self.config.threshold)
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
        labelled = any(label.label == HISTORY_RETRIEVAL_FAILURE for label in history_use(t, self.config))
        missed_before = any(not r.stated_in_query and not r.recorded for r in recalls)
        missed_after = any(not r.stated_in_query and not r.counterfactual for r in recalls)
        return RecallVerdict(
            queries=queries,
            targets=recalls,
            hits_recorded=len(recorded_entries),
            hits_counterfactual=len(found_entries),
            hits_gained=gained,
            hits_lost=lost,
            labels_removed=[HISTORY_RETRIEVAL_FAILURE] if labelled and not missed_after else [],
            labels_added=[HISTORY_RETRIEVAL_FAILURE] if missed_after and not missed_before else [],
        )

    def failed(self, error: str, cost_usd: float | None) -> RecallVerdict:
        return RecallVerdict(status="failed", error=error)

    def payload(self, trajectory: Trajectory, key: CacheKey, verdict: RecallVerdict) -> RetrievalCounterfactual:
        c = self.config
        fields: dict[str, Any] = {
            **self.keyed(trajectory, key, verdict.status, verdict.error),
            "retriever": {"model_id": c.model_id, "k": c.k, "threshold": c.threshold},
            "queries": verdict.queries,
            "targets": verdict.targets,
            "hits_recorded": verdict.hits_recorded,
            "hits_counterfactual": verdict.hits_counterfactual,
            "hits_gained": verdict.hits_gained,
            "hits_lost": verdict.hits_lost,
            "labels_removed": verdict.labels_removed,
            "labels_added": verdict.labels_added,
        }
        return RetrievalCounterfactual(**fields)


def _recall(
    target: Target, query: str, recorded: Sequence[RetrievedEntry], found: Sequence[MemoryEntry]
) -> TargetRecall:
    return TargetRecall(
        name=target.name,
        stated_in_query=target.in_text(query) is not None,
        recorded=_states(target, recorded),
        counterfactual=_states(target, found),
    )


def _states(target: Target, entries: Sequence[RetrievedEntry | MemoryEntry]) -> bool:
    """Whether an entry states the value, read as the classifier reads retrieved entries (with their website)."""
    for entry in entries:
        text = f"{entry.key_text()} ({entry.website})" if entry.website else entry.key_text()
        if target.in_text(text) is not None:
            return True
    return False
