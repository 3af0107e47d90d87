"""Recorded vs counterfactual retrieval as a grouped bar chart: ground-truth recall per kind of value."""

from __future__ import annotations

from pathlib import Path

from p2w_rt.replay.retrieval_cf._pass import CounterfactualSummary
from p2w_runtime.errors import UserError

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
    """Write a PNG; matplotlib's object API with the Agg canvas, as the classifier's plot."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    recall = recall_by_kind(summary)
    kinds = list(recall)
    figure = Figure(figsize=(6.0, 4.0), layout="constrained")
    FigureCanvasAgg(figure)
    ax = figure.add_subplot()
    for i, (name, which) in enumerate((("recorded", 0), (retriever, 1))):
        xs = [x + (i - 0.5) * 0.4 for x in range(len(kinds))]
        ax.bar(xs, [recall[k][which] or 0.0 for k in kinds], 0.4, label=name)
    ax.set_xticks(range(len(kinds)), kinds)
    ax.set_ylim(0, 1)
    ax.set_ylabel("ground-truth values retrieved")
    ax.set_title(f"Retrieval recall, {len(summary.outcomes)} episodes")
    ax.legend(fontsize=8)
    try:
        figure.savefig(path, format="png", dpi=120)
    except OSError as exc:
        raise UserError(f"cannot write the plot to {path}: {exc.strerror or exc}") from None
    return path
