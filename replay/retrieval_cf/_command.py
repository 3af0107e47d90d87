"""What ``p2w-rt replay RUN --retriever EMBEDDER`` asks of the library: the options, and the counterfactual pass over
runs through the families' one entry (``replay.derived.run_family``), the recall plot included.

It returns the data; ``p2w_cli.render.retrieval_cf`` turns it into the table and totals line the CLI prints.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from p2w_rt.replay.derived import FamilyReport, PassOptions, PassWatch, run_family
from p2w_rt.replay.metrics import check_plot_path
from p2w_rt.replay.retrieval_cf._pass import RETRIEVALS, CounterfactualOutcome, CounterfactualSummary
from p2w_rt.replay.retrieval_cf._plot import plot_recall
from p2w_rt.replay.retrieval_cf._producer import CounterfactualRetrieval, RetrievalSettings
from p2w_rt.schemas import RetrievalCounterfactual
from p2w_runtime.domain import RunInfo, run_banks
from p2w_runtime.errors import UserError
from p2w_runtime.retrieval import DEFAULT_K, DEFAULT_THRESHOLD, HistoryRetriever, load_embedder
from p2w_runtime.store import EventStore


@dataclass(frozen=True)
class CounterfactualOptions(PassOptions):
    embedder: str
    """sentence-transformers name or path; ``default`` is the bundled all-MiniLM-L6-v2."""
    k: int = DEFAULT_K
    threshold: float = DEFAULT_THRESHOLD
    history_dir: Path | None = None
    """Instead of the banks the run carries (checked to hold the same, unless ``other_dataset``)."""
    other_dataset: bool = False
    cache_dir: Path | None = None
    plot: Path | None = None
    """Recorded vs counterfactual recall per kind of value, in the format its suffix names; of one run."""


@dataclass(frozen=True)
class CounterfactualReport(FamilyReport[CounterfactualSummary]):
    """The counterfactual passes, and the plot written (``options.plot``)."""

    plot: Path | None = None


async def counterfactual_runs(
    store: EventStore,
    run_refs: Sequence[str],
    options: CounterfactualOptions,
    watch: PassWatch[CounterfactualOutcome, CounterfactualSummary] | None = None,
) -> CounterfactualReport:
    """Run the pass over each run (and write ``options.plot``); user errors come before anything is written."""
    if options.plot is not None and len(run_refs) != 1:
        raise UserError(f"a recall plot is of one run; {len(run_refs)} given")
    if options.plot is not None:
        check_plot_path(options.plot)
    made: list[CounterfactualRetrieval] = []

    async def producer(info: RunInfo) -> list[CounterfactualRetrieval]:
        retriever = await _retriever(store, info, options)
        made.append(
            CounterfactualRetrieval(RetrievalSettings(retriever, options.k, options.threshold, options.settings()))
        )
        return made[-1:]

    report = await run_family(store, RETRIEVALS, run_refs, options, producer, watch)
    if options.plot is not None:
        c = made[0].config
        plot_recall(report.runs[0].summary, options.plot, f"{c.model_id} k={c.k} t={c.threshold}")
    return CounterfactualReport(report.kind, report.runs, options.plot)


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
