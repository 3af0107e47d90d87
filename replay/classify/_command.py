"""What ``p2w-rt classify`` does, so that cli.py only parses options and calls this."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from p2w_runtime.episode import episodes_of
from p2w_runtime.store import Recorder, RunInfo, find_run
from p2w_runtime.terminal import cell, markup
from replay.classify._base import Classifier
from replay.classify._plot import plot_summary
from replay.classify._records import classification_stream
from replay.classify._registry import make_classifier
from replay.classify._rules import RulesClassifier
from replay.classify._runner import ClassifyOutcome, ClassifySummary, classify_run
from replay.classify._summary import ErrorSummary, summarize
from replay.derived import PassOptions, advance, pass_progress


@dataclass(frozen=True)
class ClassifyOptions(PassOptions):
    classifier: str = RulesClassifier.id
    summary: bool = False
    per_run: bool = False
    plot: Path | None = None


def _classifier(options: ClassifyOptions) -> Classifier:
    """The classifier named in ``options``; the LLM client is built on first need and closed by the classifier."""
    return make_classifier(options.classifier, options.settings(), options.llm_client)


def outcome_json(info: RunInfo, outcome: ClassifyOutcome) -> dict[str, Any]:
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


def _lines(outcome: ClassifyOutcome) -> list[str]:
    """Rich markup lines; recorded text is escaped (actions and queries are full of brackets)."""
    c = outcome.classification
    tag = "cached " if outcome.cached else ""
    task = markup(c.task_id)
    if c.status != "ok":
        return [f"{tag}[red]failed[/]  {task}: {markup(c.error or '')}"]
    names = markup(", ".join(label.label for label in c.labels)) or "[green]no error[/]"
    return [f"{tag}{task}  {names}", *(f"    {markup(label.label)}: {markup(label.explanation)}" for label in c.labels)]


def summary_table(summary: ErrorSummary) -> Table:
    """One row per error type, one column per agent / model / scheme: episodes showing the error."""
    table = Table(title=f"Episodes per error type ({markup(summary.classifier_id)} classifier)")
    table.add_column("error", no_wrap=True)
    for row in summary.rows:
        runs = cell(f"({', '.join(row.runs)}; n={row.episodes})")
        table.add_column(Text.assemble(cell(row.group), "\n", runs), justify="right")
    for label in summary.labels:
        table.add_row(cell(label), *(str(row.counts.get(label, 0)) for row in summary.rows))
    if any(row.unclassified for row in summary.rows):
        table.add_row("(unclassified)", *(str(row.unclassified) for row in summary.rows), style="yellow")
    return table


async def _classify_one(
    store: Recorder, info: RunInfo, classifier: Classifier, options: ClassifyOptions, out: Console, err: Console
) -> ClassifySummary:
    total = len(await episodes_of(store, info.run_id))
    quiet = options.as_json or options.summary
    progress = pass_progress("classifying", err if quiet else out, transient=quiet)
    task = progress.add_task(markup(info.label), total=total, state="")
    counts = ClassifySummary(info.run_id, classifier.id)

    def on_outcome(outcome: ClassifyOutcome) -> None:
        counts.add(outcome)
        advance(progress, task, counts)
        if options.as_json and not options.summary:
            out.print(json.dumps(outcome_json(info, outcome)), markup=False, highlight=False, soft_wrap=True)
        elif not quiet:
            for line in _lines(outcome):
                progress.console.print(line, highlight=False)

    with progress:
        summary = await classify_run(
            store, info.run_id, classifier, concurrency=options.concurrency, force=options.force, on_outcome=on_outcome
        )
    err.print(
        cell(
            f"{info.label}: classified {summary.classified}, cached {summary.cached}, failed {summary.failed} "
            f"(classifications in stream {classification_stream(info.run_id)})"
        )
    )
    return summary


async def classify_command(
    store: Recorder, run_refs: Sequence[str], options: ClassifyOptions, out: Console, err: Console
) -> int:
    """Classify each run (cached), then print per-episode labels or the summary; 1 when a classification failed."""
    runs = [await find_run(store, ref) for ref in run_refs]
    classifier = _classifier(options)
    results: list[tuple[RunInfo, ClassifySummary]] = []
    try:
        for info in runs:
            results.append((info, await _classify_one(store, info, classifier, options, out, err)))
    finally:
        await classifier.aclose()
    if options.summary or options.plot:
        summary = summarize(results, per_run=options.per_run)
        if options.summary:
            if options.as_json:
                out.print(json.dumps(summary.to_json()), markup=False, highlight=False, soft_wrap=True)
            else:
                out.print(summary_table(summary))
        if options.plot:
            path = plot_summary(summary, options.plot)
            err.print(cell(f"plot written to {path}"))
    return 1 if any(s.failed for _, s in results) else 0
