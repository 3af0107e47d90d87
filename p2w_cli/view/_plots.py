"""The run page's plots, drawn by the same functions ``p2w-rt metrics --plot`` and ``classify --plot`` use."""

from __future__ import annotations

import tempfile
from pathlib import Path

from p2w_cli.view._queries import RunRead, current_classifications
from replay.classify import ClassifyOutcome, ClassifySummary, plot_summary, summarize
from replay.metrics import aggregate, plot_levels

PLOTS = ("levels", "errors")


class NoPlot(LookupError):
    pass


def plot_png(read: RunRead, name: str) -> bytes:
    """PNG bytes of ``levels`` (SR and P_avg by ambiguity level, per judge) or ``errors`` (labels per type)."""
    with tempfile.TemporaryDirectory(prefix="p2w-view-") as folder:
        path = Path(folder) / f"{name}.png"
        if name == "levels":
            if not any(s.metrics is not None for s in read.scores):
                raise NoPlot(f"run {read.info.label!r} has no judgments to plot")
            plot_levels(aggregate(read.scores, by=("judge", "level")), path)
        elif name == "errors":
            plot_summary(summarize([(read.info, _classified(read))], per_run=True), path)
        else:
            raise NoPlot(f"no plot {name!r}; choose from {', '.join(PLOTS)}")
        return path.read_bytes()


def _classified(read: RunRead) -> ClassifySummary:
    """The run's current classifications as ``summarize`` takes them, for its most used classifier."""
    records = current_classifications(read.classifications, read.rows)
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
