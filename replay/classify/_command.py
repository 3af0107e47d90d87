"""What ``p2w-rt classify`` asks of the library: the options, and classifying runs with them through the families'
one entry (``replay.derived.run_family``), the error summary and its chart included (data, no output)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from p2w_rt.replay.classify._base import Classifier
from p2w_rt.replay.classify._plot import plot_summary
from p2w_rt.replay.classify._registry import CLASSIFIERS, ClassifyOutcome, ClassifySummary, make_classifier
from p2w_rt.replay.classify._summary import ErrorSummary, summarize
from p2w_rt.replay.derived import FamilyReport, PassOptions, PassWatch, run_family
from p2w_rt.replay.metrics import check_plot_path
from p2w_runtime.domain import RunInfo
from p2w_runtime.store import EventStore


@dataclass(frozen=True)
class ClassifyOptions(PassOptions):
    classifier: str = field(default_factory=lambda: CLASSIFIERS.default)
    summary: bool = False
    per_run: bool = False
    plot: Path | None = None


@dataclass(frozen=True)
class ClassifyReport(FamilyReport[ClassifySummary]):
    """The classifying passes, and with ``summary`` or ``plot`` the error summary (``errors``) and the chart written."""

    errors: ErrorSummary | None = None
    plot: Path | None = None


def outcome_json(info: RunInfo, outcome: ClassifyOutcome) -> dict[str, Any]:
    """The ``--json`` object of one classified episode."""
    c = outcome.classification
    return {
        "run_id": info.run_id,
        "task_id": c.task_id,
        "episode": c.episode_stream,
        "level": outcome.level,
        "classifier": c.classifier_id,
        "classifier_version": c.classifier_version,
        "status": c.status,
        "error": c.error,
        "cached": outcome.cached,
        "labels": [label.model_dump(mode="json") for label in c.labels],
    }


async def classify_runs(
    store: EventStore,
    run_refs: Sequence[str],
    options: ClassifyOptions,
    watch: PassWatch[ClassifyOutcome, ClassifySummary] | None = None,
) -> ClassifyReport:
    """Classify each run (cached); then the error summary, and its chart written to ``options.plot`` (whose name
    is checked first: a typo must not cost a pass)."""
    if options.plot is not None:
        check_plot_path(options.plot)

    async def classifier(info: RunInfo) -> list[Classifier[Any]]:
        return [make_classifier(options.classifier, options.settings())]

    report = await run_family(store, CLASSIFIERS, run_refs, options, classifier, watch)
    errors, plot = None, None
    if options.summary or options.plot:
        errors = summarize([(r.run, r.summary) for r in report.runs], per_run=options.per_run)
        if options.plot:
            plot = plot_summary(errors, options.plot)
    return ClassifyReport(report.kind, report.runs, errors, plot)
