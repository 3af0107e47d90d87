"""The run page's plots, drawn by the same functions ``p2w-rt metrics --plot`` and ``classify --plot`` use."""

from __future__ import annotations

import tempfile
from pathlib import Path

from p2w_runtime.store import Recorder, RunInfo
from replay.classify import ClassifyOutcome, ClassifySummary, plot_summary, read_classifications, summarize
from replay.metrics import aggregate, collect_scores, plot_levels
from replay.view._queries import current_classifications, episode_rows

PLOTS = ("levels", "errors")


class NoPlot(LookupError):
    pass


async def plot_png(store: Recorder, info: RunInfo, name: str) -> bytes:
    """PNG bytes of ``levels`` (SR and P_avg by ambiguity level, per judge) or ``errors`` (labels per type)."""
    with tempfile.TemporaryDirectory(prefix="p2w-view-") as folder:
        path = Path(folder) / f"{name}.png"
        if name == "levels":
            scores = [s for s in await collect_scores(store, [info]) if s.judge is not None]
            if not scores:
                raise NoPlot(f"run {info.label!r} has no judgments to plot")
            plot_levels(aggregate(scores, by=("judge", "level")), path)
        elif name == "errors":
            plot_summary(summarize([(info, await _classified(store, info))], per_run=True), path)
        else:
            raise NoPlot(f"no plot {name!r}; choose from {', '.join(PLOTS)}")
        return path.read_bytes()


async def _classified(store: Recorder, info: RunInfo) -> ClassifySummary:
    """The run's current classifications as ``summarize`` takes them, for its most used classifier."""
    rows = {row.ref.stream: row for row in await episode_rows(store, info)}
    records = current_classifications(await read_classifications(store, info.run_id), rows)
    if not records:
        raise NoPlot(f"run {info.label!r} has no classifications to plot")
    ids = [r.classification.classifier_id for r in records]
    chosen = max(sorted(set(ids)), key=ids.count)
    summary = ClassifySummary(info.run_id, chosen)
    for record in records:
        if record.classification.classifier_id == chosen:
            ref = rows[record.classification.episode_stream].ref
            summary.add(ClassifyOutcome.of(ref, record.classification, cached=True, event_id=record.event_id))
    return summary
