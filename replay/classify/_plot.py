"""The error summary as a grouped bar chart: one group of bars per error type, one bar per run (or per
agent/model/scheme)."""

from __future__ import annotations

from pathlib import Path

from p2w_rt.replay.classify._summary import ErrorSummary
from p2w_runtime.errors import UserError


class PlotError(UserError):
    """The chart could not be written (bad directory, no permission)."""


def plot_summary(summary: ErrorSummary, path: Path) -> Path:
    """Write a PNG; matplotlib's object API with the Agg canvas, so no display and no global pyplot state."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    labels = summary.labels
    rows = summary.rows
    figure = Figure(figsize=(max(6.0, 1.3 * len(labels) + 2), 4.5), layout="constrained")
    FigureCanvasAgg(figure)
    ax = figure.add_subplot()
    width = 0.8 / max(1, len(rows))
    for i, row in enumerate(rows):
        xs = [x + (i - (len(rows) - 1) / 2) * width for x in range(len(labels))]
        ax.bar(xs, [row.counts.get(label, 0) for label in labels], width, label=f"{row.name}, n={row.episodes}")
    ax.set_xticks(range(len(labels)), [label.replace("_", "\n") for label in labels], fontsize=8)
    ax.set_ylabel("episodes")
    by = "run" if rows and rows[0].run_label is not None else "agent / model / scheme"
    ax.set_title(f"Errors by {by} ({summary.classifier_id} classifier)")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    if rows:
        ax.legend(fontsize=8)
    try:
        figure.savefig(path, format="png", dpi=120)
    except OSError as exc:
        raise PlotError(f"cannot write the plot to {path}: {exc.strerror or exc}") from None
    return path
