"""Counterfactual retrieval on a terminal: recorded and counterfactual recall side by side, and the totals."""

from __future__ import annotations

import json

from rich.console import Console
from rich.table import Table

from p2w_cli.render.terminal import cell
from p2w_rt.replay.retrieval_cf import CounterfactualReport, CounterfactualSummary, recall, totals
from p2w_runtime.domain import RunInfo


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
        task = cell(p.task_id + (" (cached)" if outcome.cached else ""))
        if p.status != "ok":
            table.add_row(task, "-", "-", "-", "-", "-", cell(f"failed: {p.error}"), style="red")
            continue
        labels = [f"-{x}" for x in p.labels_removed] + [f"+{x}" for x in p.labels_added]
        table.add_row(
            task,
            str(p.queries),
            _fmt(recall(p, "recorded")),
            _fmt(recall(p, "counterfactual")),
            str(p.hits_gained),
            str(p.hits_lost),
            cell(", ".join(labels)),
        )
    return table


def totals_line(summary: CounterfactualSummary) -> str:
    t = totals(summary)
    return (
        f"{t['episodes']} episodes, {t['values']} ground-truth values: recall {_fmt(t['recall_recorded'])} recorded -> "
        f"{_fmt(t['recall_counterfactual'])} counterfactual; hits +{t['hits_gained']} -{t['hits_lost']}; "
        f"history_retrieval_failure removed in {t['retrieval_failures_removed']}, "
        f"added in {t['retrieval_failures_added']}; replayed {summary.new}, cached {summary.cached}, "
        f"failed {summary.failed}"
    )


def show_report(report: CounterfactualReport, out: Console, *, as_json: bool, seconds: float) -> None:
    """``replay --retriever``: per run, one JSON object per episode, or its table and totals line (with the wait)."""
    for result in report.runs:
        if as_json:
            for outcome in result.summary.outcomes:
                row = {**outcome.payload.model_dump(mode="json"), "cached": outcome.cached}
                out.print(json.dumps(row), markup=False, highlight=False, soft_wrap=True)
        else:
            out.print(episode_table(result.run, result.summary))
            out.print(f"{totals_line(result.summary)} ({seconds:.2f} s)", highlight=False)
