"""What ``p2w-rt replay RUN --retriever EMBEDDER`` does: build the retriever, run the pass, write the plot.

It returns the data; ``p2w_cli.render.retrieval_cf`` turns it into the table and totals line the CLI prints.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from p2w_rt.replay.derived import PassSettings, run_pass
from p2w_rt.replay.retrieval_cf._pass import RETRIEVALS, CounterfactualSummary
from p2w_rt.replay.retrieval_cf._plot import plot_recall
from p2w_rt.replay.retrieval_cf._producer import CounterfactualRetrieval, RetrievalSettings
from p2w_rt.schemas import RetrievalCounterfactual
from p2w_runtime.domain import RunInfo, find_run, run_banks
from p2w_runtime.retrieval import DEFAULT_K, DEFAULT_THRESHOLD, HistoryRetriever, load_embedder
from p2w_runtime.store import EventStore


@dataclass(frozen=True)
class CounterfactualOptions:
    embedder: str
    """sentence-transformers name or path; ``default`` is the bundled all-MiniLM-L6-v2."""
    k: int = DEFAULT_K
    threshold: float = DEFAULT_THRESHOLD
    history_dir: Path | None = None
    """Instead of the banks the run carries (checked to hold the same, unless ``other_dataset``)."""
    other_dataset: bool = False
    cache_dir: Path | None = None
    force: bool = False
    plot: Path | None = None
    settings: PassSettings = field(default_factory=PassSettings)


@dataclass(frozen=True)
class CounterfactualReport:
    run: RunInfo
    summary: CounterfactualSummary

    @property
    def exit_code(self) -> int:
        """1 when an episode could not be evaluated."""
        return 1 if self.summary.failed else 0


async def counterfactual_command(
    store: EventStore, run_ref: str, options: CounterfactualOptions
) -> CounterfactualReport:
    """Run the pass over ``run_ref`` (and write ``options.plot``); user errors come before anything is written."""
    run = await find_run(store, run_ref)
    retriever = await _retriever(store, run, options)
    settings = RetrievalSettings(retriever, options.k, options.threshold, options.settings)
    producer = CounterfactualRetrieval(settings)
    summary = await run_pass(RETRIEVALS, store, run.run_id, [producer], concurrency=1, force=options.force)
    if options.plot is not None:
        c = producer.config
        plot_recall(summary, options.plot, f"{c.model_id} k={c.k} t={c.threshold}")
    return CounterfactualReport(run, summary)


async def _retriever(store: EventStore, run: RunInfo, options: CounterfactualOptions) -> HistoryRetriever:
    """The banks the run carries (or the folder given) searched with ``options.embedder``; the result's config
    names the banks by content, so another folder's results are cached apart."""
    banks = await run_banks(store, run, options.history_dir, other_dataset=options.other_dataset)
    name = None if options.embedder == "default" else options.embedder
    embedder = await asyncio.to_thread(load_embedder, name)
    return HistoryRetriever(banks, embedder, options.cache_dir)


def recall(payload: RetrievalCounterfactual, which: str) -> float | None:
    """Share of the ground-truth values some retrieved entry states (``recorded`` or ``counterfactual``)."""
    if not payload.targets:
        return None
    return sum(bool(getattr(t, which)) for t in payload.targets) / len(payload.targets)


def totals(summary: CounterfactualSummary) -> dict[str, Any]:
    """Run-level figures: recall over every ground-truth value of every evaluated episode (micro average)."""
    ok = [o.payload for o in summary.outcomes if o.payload.status == "ok"]
    values = [t for p in ok for t in p.targets]
    return {
        "episodes": len(ok),
        "values": len(values),
        "recall_recorded": sum(t.recorded for t in values) / len(values) if values else None,
        "recall_counterfactual": sum(t.counterfactual for t in values) / len(values) if values else None,
        "hits_gained": sum(p.hits_gained for p in ok),
        "hits_lost": sum(p.hits_lost for p in ok),
        "retrieval_failures_removed": sum(bool(p.labels_removed) for p in ok),
        "retrieval_failures_added": sum(bool(p.labels_added) for p in ok),
    }
