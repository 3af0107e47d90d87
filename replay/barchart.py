"""A grouped bar chart as an image (the error summary by type, recall by kind of value): matplotlib's object API with
the Agg canvas, so no display and no global pyplot state; matplotlib is imported on the first chart."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from p2w_runtime.errors import UserError


class PlotError(UserError):
    """The chart could not be written (bad directory, no permission)."""


def grouped_bars(
    path: Path, ticks: Sequence[str], series: Sequence[tuple[str, Sequence[float]]], *, title: str, ylabel: str,
    size: tuple[float, float], counts: bool = False, tick_size: float | None = None, fmt: str = "png",
) -> Path:  # fmt: skip
    """Write one group of bars per tick, one bar per series (legend label, a value per tick), as ``fmt`` (a
    matplotlib format name). ``counts``: whole numbers on the y axis; else the values are shares, from 0 to 1."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    figure = Figure(figsize=size, layout="constrained")
    FigureCanvasAgg(figure)
    ax = figure.add_subplot()
    width = 0.8 / max(1, len(series))
    for i, (label, values) in enumerate(series):
        ax.bar([x + (i - (len(series) - 1) / 2) * width for x in range(len(ticks))], values, width, label=label)
    ax.set_xticks(range(len(ticks)), ticks, fontsize=tick_size)
    ax.set(ylabel=ylabel, title=title)
    if counts:
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    else:
        ax.set_ylim(0, 1)
    if series:
        ax.legend(fontsize=8)
    try:
        figure.savefig(path, format=fmt, dpi=120)
    except OSError as exc:
        raise PlotError(f"cannot write the plot to {path}: {exc.strerror or exc}") from None
    return path
