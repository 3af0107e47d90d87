"""The error summary as a grouped bar chart: one group of bars per error type, one bar per run (or per
agent/model/scheme)."""

from __future__ import annotations

from pathlib import Path

from p2w_rt.replay.barchart import grouped_bars
from p2w_rt.replay.classify._summary import ErrorSummary
from p2w_rt.replay.metrics import plot_format


def plot_summary(summary: ErrorSummary, path: Path) -> Path:
    """Write a chart of the episodes showing each label, per row of the summary, in the format of ``path``'s suffix
    (``replay.metrics.PLOT_FORMATS``, the rule of every ``--plot``)."""
    labels, rows = summary.labels, summary.rows
    by = "run" if rows and rows[0].run_label is not None else "agent / model / scheme"
    return grouped_bars(
        path,
        [label.replace("_", "\n") for label in labels],
        [(f"{row.name}, n={row.episodes}", [row.counts.get(label, 0) for label in labels]) for row in rows],
        title=f"Errors by {by} ({summary.classifier_id} classifier)",
        ylabel="episodes",
        size=(max(6.0, 1.3 * len(labels) + 2), 4.5),
        counts=True,
        tick_size=8,
        fmt=plot_format(path),
    )
