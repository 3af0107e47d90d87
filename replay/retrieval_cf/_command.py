"""What ``p2w-rt replay RUN --retriever EMBEDDER`` does: the pass, then recorded and counterfactual side by side."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from p2w_runtime.errors import UserError
from p2w_runtime.retrieval import DEFAULT_K, DEFAULT_THRESHOLD, HistoryRetriever, load_embedder
from p2w_runtime.store import Recorder, RunInfo, find_run
from p2w_runtime.terminal import cell
from replay.judges import JudgeSettings
from replay.retrieval_cf._pass import CounterfactualSummary, counterfactual_run
from replay.retrieval_cf._plot import plot_recall
from replay.retrieval_cf._producer import CounterfactualRetrieval
from schemas import RetrievalCounterfactual


@dataclass(frozen=True)
class CounterfactualOptions:
    embedder: str
    """sentence-transformers name or path; ``default`` is the bundled all-MiniLM-L6-v2."""
    k: int = DEFAULT_K
    threshold: float = DEFAULT_THRESHOLD
    history_dir: Path | None = None
    cache_dir: Path | None = None
    force: bool = False
    as_json: bool = False
    plot: Path | None = None
    settings: JudgeSettings = field(default_factory=JudgeSettings)


async def counterfactual_command(store: Recorder, run_ref: str, options: CounterfactualOptions, out: Console) -> int:
    """Run the pass over ``run_ref`` and print it; exit code 1 when an episode could not be evaluated."""
    run = await find_run(store, run_ref)
    retriever = await _retriever(run, options)
    producer = CounterfactualRetrieval(retriever, options.k, options.threshold, options.settings)
    summary = await counterfactual_run(store, run.run_id, producer, force=options.force)
    if options.as_json:
        for outcome in summary.outcomes:
            row = {**outcome.payload.model_dump(mode="json"), "cached": outcome.cached}
            out.print(json.dumps(row), markup=False, highlight=False, soft_wrap=True)
    else:
        out.print(episode_table(run, summary))
        out.print(totals_line(summary), highlight=False)
    if options.plot is not None:
        config = producer.config()
        plot_recall(summary, options.plot, f"{config['model_id']} k={config['k']} t={config['threshold']}")
    return 1 if summary.failed else 0


async def _retriever(run: RunInfo, options: CounterfactualOptions) -> HistoryRetriever:
    recorded = run.started.config.get("history_dir")
    history = options.history_dir or (Path(recorded) if recorded else None)
    if history is None or not history.is_dir():
        raise UserError(
            f"run {run.label!r}: memory-bank folder {history or '(not recorded)'} does not exist; pass --history DIR"
        )
    name = None if options.embedder == "default" else options.embedder
    embedder = await asyncio.to_thread(load_embedder, name)
    return HistoryRetriever(history, embedder, options.cache_dir)


def recall(payload: RetrievalCounterfactual, which: str) -> float | None:
    """Share of the ground-truth values some retrieved entry states (``recorded`` or ``counterfactual``)."""
    if not payload.targets:
        return None
    return sum(bool(getattr(t, which)) for t in payload.targets) / len(payload.targets)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def episode_table(run: RunInfo, summary: CounterfactualSummary) -> Table:
    """Per episode: ground-truth recall in the recorded hits and in the counterfactual ones, hits gained and lost."""
    first = summary.outcomes[0].payload.retriever if summary.outcomes else {}
    title = (
        f"{run.label}: recorded retrieval vs {first.get('model_id', '?')} k={first.get('k')} t={first.get('threshold')}"
    )
    table = Table(title=cell(title))
    for name in ("task", "queries", "recall recorded", "recall counterfactual", "gained", "lost", "labels"):
        table.add_column(name, justify="left" if name in ("task", "labels") else "right")
    for outcome in summary.outcomes:
        p = outcome.payload
        if p.status != "ok":
            table.add_row(cell(p.task_id), "-", "-", "-", "-", "-", cell(f"failed: {p.error}"), style="red")
            continue
        labels = [f"-{x}" for x in p.labels_removed] + [f"+{x}" for x in p.labels_added]
        table.add_row(
            cell(p.task_id + (" (cached)" if outcome.cached else "")),
            str(p.queries),
            _fmt(recall(p, "recorded")),
            _fmt(recall(p, "counterfactual")),
            str(p.hits_gained),
            str(p.hits_lost),
            cell(", ".join(labels)),
        )
    return table


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


def totals_line(summary: CounterfactualSummary) -> str:
    t = totals(summary)
    return (
        f"{t['episodes']} episodes, {t['values']} ground-truth values: recall {_fmt(t['recall_recorded'])} recorded -> "
        f"{_fmt(t['recall_counterfactual'])} counterfactual; hits +{t['hits_gained']} -{t['hits_lost']}; "
        f"history_retrieval_failure removed in {t['retrieval_failures_removed']}, "
        f"added in {t['retrieval_failures_added']}; {summary.cached} cached"
    )
