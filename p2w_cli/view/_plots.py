"""The run page's plots: levels and errors drawn by the same functions ``p2w-rt metrics --plot`` and ``classify
--plot`` use, and the run's time, tokens and cost per episode (the viewer's own, from ``RunUsage``)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING

from p2w_cli.view._render import duration
from p2w_cli.view._run_read import RunRead, current_results
from p2w_cli.view._usage import RunUsage
from p2w_rt.replay.classify import ClassificationRecord, ClassifyOutcome, ClassifySummary, plot_summary, summarize
from p2w_rt.replay.metrics import aggregate, plot_levels
from p2w_runtime.scratch import scratch_folder

if TYPE_CHECKING:
    from matplotlib.axes import Axes

PLOTS = ("levels", "errors", "usage")
BAR_LIMIT = 100
"""Episodes up to which the usage chart draws one bar each."""


class NoPlot(LookupError):
    pass


def plot_png(
    read: RunRead,
    name: str,
    usage: RunUsage | None = None,
    classifications: Sequence[ClassificationRecord] = (),
) -> bytes:
    """PNG bytes of ``levels`` (SR and P_avg by ambiguity level, per judge), ``errors`` (labels per type: the run's
    ``classifications`` must be given) or ``usage`` (time, tokens and cost per episode: ``usage`` must be given)."""
    if name == "usage":
        if usage is None or not usage.episodes:
            raise NoPlot(f"run {read.info.label!r} has no finished episode to plot")
        return plot_usage(usage)
    with scratch_folder("view") as folder:
        path = folder / f"{name}.png"
        if name == "levels":
            if not any(s.metrics is not None for s in read.scores):
                raise NoPlot(f"run {read.info.label!r} has no judgments to plot")
            plot_levels(aggregate(read.scores, by=("judge", "level")), path)
        elif name == "errors":
            plot_summary(summarize([(read.info, _classified(read, classifications))], per_run=True), path)
        else:
            raise NoPlot(f"no plot {name!r}; choose from {', '.join(PLOTS)}")
        return path.read_bytes()


def _classified(read: RunRead, classifications: Sequence[ClassificationRecord]) -> ClassifySummary:
    """The run's current classifications as ``summarize`` takes them, for its most used classifier."""
    records = current_results(classifications, read.rows)
    if not records:
        raise NoPlot(f"run {read.info.label!r} has no classifications to plot")
    ids = [r.classification.classifier_id for r in records]
    chosen = max(sorted(set(ids)), key=ids.count)
    summary = ClassifySummary(read.info.run_id, chosen)
    for record in records:
        if record.classification.classifier_id == chosen:
            ref = read.rows[record.classification.episode_stream].ref
            summary.add(ClassifyOutcome.of(ref, record.classification, cached=True, event_id=record.event_id))
    return summary


def plot_usage(usage: RunUsage) -> bytes:
    """Three panels over the counted episodes in recording order: seconds, tokens (prompt and completion stacked)
    and cost with its running total; a run without any priced call says so in the cost panel."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator, StrMethodFormatter

    episodes = usage.episodes
    xs = [e.index + 1 for e in episodes]
    edges = [x - 0.5 for x in xs] + [xs[-1] + 0.5]

    def bars(ax: Axes, ys: Sequence[float], color: str, label: str = "", bottom: Sequence[float] = ()) -> None:
        """Bars for a few episodes; one filled step line for many (a bar per episode of 1,000 took 4 s to draw)."""
        under = list(bottom) or [0.0] * len(ys)
        if len(ys) <= BAR_LIMIT:
            ax.bar(xs, ys, 0.8, bottom=under, color=color, label=label or None)
        else:
            tops = [b + y for b, y in zip(under, ys, strict=True)]
            ax.stairs(tops, edges, baseline=under, fill=True, color=color, label=label or None)

    figure = Figure(figsize=(9.0, 6.0), layout="constrained")
    FigureCanvasAgg(figure)
    time_ax, token_ax, cost_ax = figure.subplots(3, 1, sharex=True)
    bars(time_ax, [e.seconds or 0.0 for e in episodes], "#4c72b0")
    time_ax.set_ylabel("seconds")
    time_ax.set_title(f"Time per episode (total {duration(usage.summary.seconds)})", fontsize=10, loc="left")
    prompt = [e.usage.prompt_tokens for e in episodes]
    bars(token_ax, prompt, "#55a868", "prompt")
    bars(token_ax, [e.usage.completion_tokens for e in episodes], "#c44e52", "completion", bottom=prompt)
    token_ax.set_ylabel("tokens")
    token_ax.yaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    token_ax.set_title(f"Tokens per episode (total {usage.summary.episodes.tokens:,})", fontsize=10, loc="left")
    token_ax.legend(fontsize=8, loc="upper right")
    costs = [e.usage.cost_usd for e in episodes]
    total = usage.summary.episodes.cost_usd
    if total is None:
        models = ", ".join(usage.summary.unpriced_models) or "its model"
        cost_ax.text(
            0.5,
            0.5,
            f"no cost: no recorded cost and no price for {models}",
            ha="center",
            va="center",
            transform=cost_ax.transAxes,
            color="#6b7482",
        )
        cost_ax.set_yticks([])
    else:
        bars(cost_ax, [c or 0.0 for c in costs], "#8172b2")
        running, sums = 0.0, []
        for c in costs:
            running += c or 0.0
            sums.append(running)
        cumulative = cost_ax.twinx()
        cumulative.plot(xs, sums, color="#dd8452", linewidth=1.5)
        cumulative.set_ylabel("running total, USD", color="#dd8452", fontsize=8)
        cost_ax.set_ylabel("USD")
    cost_ax.set_title(f"Cost per episode (total {'-' if total is None else f'${total:.4f}'})", fontsize=10, loc="left")
    cost_ax.set_xlabel("episode (recording order)")
    cost_ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    cost_ax.set_xlim(0.4, max(xs[-1], 12) + 0.6)  # a few episodes keep bars of a readable width
    for ax in (time_ax, token_ax, cost_ax):
        ax.grid(axis="y", alpha=0.3)
    out = io.BytesIO()
    figure.savefig(out, format="png", dpi=100)
    return out.getvalue()
