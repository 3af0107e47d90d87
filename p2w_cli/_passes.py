"""How ``replay`` and ``classify`` show a pass: a progress bar, one line per result as it lands (a failure
shown once per distinct error, then counted), and the closing counts. The work is the library's."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from p2w_cli.render.classify import outcome_lines, summary_table
from p2w_cli.render.judging import estimate_json, estimates_table, judgment_json, judgment_line
from p2w_cli.render.terminal import cell, markup
from p2w_rt.replay.classify import (
    ClassifyOptions,
    ClassifyOutcome,
    ClassifySummary,
    classification_stream,
    classify_runs,
    outcome_json,
    summarize,
)
from p2w_rt.replay.derived import Tally, run_pass
from p2w_rt.replay.judges import JUDGES, JudgeOptions, JudgeOutcome, JudgeSummary, estimate_replay, judgment_stream
from p2w_runtime.domain import RunInfo, episodes_of, find_run
from p2w_runtime.store import EventStore


def pass_progress(verb: str, console: Console, *, transient: bool) -> Progress:
    """The bar of a pass over a run's episodes: ``{verb} {run label}``, done / total, cached and failed so far. A
    ``transient`` bar is only for a person watching a terminal: on a pipe or file it is left out (it printed an empty
    line there)."""
    return Progress(
        TextColumn(f"{verb} {{task.description}}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[state]}"),
        TimeElapsedColumn(),
        console=console,
        transient=transient,
        disable=transient and not console.is_terminal,
    )


def advance(progress: Progress, task: TaskID, counts: Tally[Any]) -> None:
    progress.update(task, advance=1, state=f"cached {counts.cached} · failed {counts.failed}")


def repeated_failures(counts: Tally[Any], err: Console) -> None:
    """Each error that failed more than one result, once, with how many it failed."""
    for error, n in counts.failures.most_common():
        if n > 1:
            err.print(cell(f"  {n} results failed with: {error}", "red"))


async def replay_command(store: EventStore, run_ref: str, options: JudgeOptions, out: Console, err: Console) -> int:
    """Judge a run (or estimate the cost of judging it); returns the exit code (1 when judgments failed)."""
    info = await find_run(store, run_ref)
    if options.dry_run:
        estimates = await estimate_replay(
            store,
            info.run_id,
            options.make_judges(),
            model=options.model,
            force=options.force,
            retry_failed=options.retry_failed,
        )
        if options.as_json:
            for e in estimates:
                out.print(json.dumps(estimate_json(e, options.model)), markup=False, highlight=False, soft_wrap=True)
        else:
            out.print(estimates_table(estimates, options.model))
            for e in estimates:
                for problem in e.unjudgeable:
                    out.print(cell(f"{e.judge_id}: cannot judge {problem}"))
        return 0
    judges = options.make_judges()
    total = len(await episodes_of(store, info.run_id)) * len(judges)
    progress = pass_progress("judging", err if options.as_json else out, transient=options.as_json)
    task = progress.add_task(markup(info.label), total=total, state="")
    counts = JudgeSummary()

    def on_outcome(outcome: JudgeOutcome) -> None:
        counts.add(outcome)
        advance(progress, task, counts)
        if options.as_json:
            row = judgment_json(outcome.judgment, cached=outcome.cached, level=outcome.level)
            out.print(json.dumps(row, ensure_ascii=False), markup=False, highlight=False, soft_wrap=True)
        elif counts.first_of_its_kind(outcome):
            progress.console.print(judgment_line(outcome), highlight=False)

    with progress:
        async with options.llm_factory() as llm:  # the LLM client is built on first need and closed after
            summary = await run_pass(
                JUDGES,
                store,
                info.run_id,
                judges,
                llm=llm,
                concurrency=options.concurrency,
                force=options.force,
                retry_failed=options.retry_failed,
                on_outcome=on_outcome,
            )
    cost = f" · judge cost ${summary.cost_usd:.4f}" if summary.cost_usd else ""
    err.print(
        cell(
            f"{info.label}: judged {summary.judged}, cached {summary.cached}, failed {summary.failed}{cost} "
            f"(judgments in stream {judgment_stream(info.run_id)})"
        )
    )
    repeated_failures(summary, err)
    if summary.failed and not options.retry_failed and not options.force:
        err.print("failed judgments are kept as they are; --retry-failed judges them again", highlight=False)
    return 1 if summary.failed else 0


async def classify_command(
    store: EventStore, run_refs: Sequence[str], options: ClassifyOptions, out: Console, err: Console
) -> int:
    """Classify each run (cached), then print per-episode labels or the summary; 1 when a classification failed."""
    runs = [await find_run(store, ref) for ref in run_refs]
    totals = {info.run_id: len(await episodes_of(store, info.run_id)) for info in runs}
    quiet = options.as_json or options.summary
    bars: dict[str, tuple[Progress, TaskID, ClassifySummary]] = {}

    def bar(info: RunInfo) -> tuple[Progress, TaskID, ClassifySummary]:
        if info.run_id not in bars:
            progress = pass_progress("classifying", err if quiet else out, transient=quiet)
            task = progress.add_task(markup(info.label), total=totals[info.run_id], state="")
            progress.start()
            bars[info.run_id] = (progress, task, ClassifySummary(info.run_id, options.classifier))
        return bars[info.run_id]

    def on_outcome(info: RunInfo, outcome: ClassifyOutcome) -> None:
        progress, task, counts = bar(info)
        counts.add(outcome)
        advance(progress, task, counts)
        if options.as_json and not options.summary:
            out.print(json.dumps(outcome_json(info, outcome)), markup=False, highlight=False, soft_wrap=True)
        elif not quiet and counts.first_of_its_kind(outcome):
            for line in outcome_lines(outcome):
                progress.console.print(line, highlight=False)

    def on_done(info: RunInfo, summary: ClassifySummary) -> None:
        if info.run_id in bars:
            bars[info.run_id][0].stop()
        err.print(
            cell(
                f"{info.label}: classified {summary.classified}, cached {summary.cached}, failed {summary.failed} "
                f"(classifications in stream {classification_stream(info.run_id)})"
            )
        )
        repeated_failures(summary, err)

    try:
        results = await classify_runs(store, runs, options, on_outcome, on_done)
    finally:
        for progress, _, _ in bars.values():
            progress.stop()
    if options.summary or options.plot:
        summary = summarize(results, per_run=options.per_run)
        if options.summary:
            if options.as_json:
                out.print(json.dumps(summary.to_json()), markup=False, highlight=False, soft_wrap=True)
            else:
                out.print(summary_table(summary))
        if options.plot:
            from p2w_rt.replay.classify import plot_summary

            path = plot_summary(summary, options.plot)
            err.print(cell(f"plot written to {path}"))
    return 1 if any(s.failed for _, s in results) else 0
