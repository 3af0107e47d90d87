"""What ``p2w-rt classify`` asks of the library: the options, and classifying runs with them (data, no output)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from p2w_rt.replay.classify._registry import CLASSIFIERS, ClassifyOutcome, ClassifySummary, make_classifier
from p2w_rt.replay.derived import PassOptions, run_pass
from p2w_runtime.domain import RunInfo
from p2w_runtime.store import EventStore


@dataclass(frozen=True)
class ClassifyOptions(PassOptions):
    classifier: str = field(default_factory=lambda: CLASSIFIERS.default)
    summary: bool = False
    per_run: bool = False
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
    runs: list[RunInfo],
    options: ClassifyOptions,
    on_outcome: Callable[[RunInfo, ClassifyOutcome], None] | None = None,
    on_done: Callable[[RunInfo, ClassifySummary], None] | None = None,
) -> list[tuple[RunInfo, ClassifySummary]]:
    """Classify each run (cached); the LLM client is built on first need and closed after."""
    classifier = make_classifier(options.classifier, options.settings())
    results: list[tuple[RunInfo, ClassifySummary]] = []
    async with options.llm_factory() as llm:
        for info in runs:
            summary = await run_pass(
                CLASSIFIERS,
                store,
                info.run_id,
                [classifier],
                llm=llm,
                concurrency=options.concurrency,
                force=options.force,
                on_outcome=None if on_outcome is None else partial(on_outcome, info),
            )
            results.append((info, summary))
            if on_done is not None:
                on_done(info, summary)
    return results
