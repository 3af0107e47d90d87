"""Recorded vs counterfactual retrieval as a grouped bar chart: ground-truth recall per kind of value."""

from __future__ import annotations

from pathlib import Path

from p2w_rt.replay.barchart import grouped_bars
from p2w_rt.replay.metrics import plot_format
from p2w_rt.replay.retrieval_cf._pass import CounterfactualSummary

KINDS = ("website", "preference", "location")


def recall_by_kind(summary: CounterfactualSummary) -> dict[str, tuple[float | None, float | None]]:
    """Kind of ground-truth value -> (recorded recall, counterfactual recall) over every evaluated episode."""
    out: dict[str, tuple[float | None, float | None]] = {}
    for kind in KINDS:
        values = [
            t
            for o in summary.outcomes
            if o.payload.status == "ok"
            for t in o.payload.targets
            if t.name.startswith(kind)
        ]
        if values:
            out[kind] = (
                sum(t.recorded for t in values) / len(values),
                sum(t.counterfactual for t in values) / len(values),
            )
    return out


def plot_recall(summary: CounterfactualSummary, path: Path, retriever: str) -> Path:
    """Write a plot of the recorded and the counterfactual recall, per kind of ground-truth value, in the format of
    ``path``'s suffix (``replay.metrics.PLOT_FORMATS``, the rule of every ``--plot``)."""
    recall = recall_by_kind(summary)
    return grouped_bars(
        path,
        list(recall),
        [(name, [r[which] or 0.0 for r in recall.values()]) for name, which in (("recorded", 0), (retriever, 1))],
        title=f"Retrieval recall, {len(summary.outcomes)} episodes",
        ylabel="ground-truth values retrieved",
        size=(6.0, 4.0),
        fmt=plot_format(path),
    )
