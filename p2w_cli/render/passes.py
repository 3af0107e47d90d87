"""How ``replay`` and ``classify`` show a family's passes: a progress bar, one line per result as it lands (a failure
shown once per distinct error, then counted), and the closing counts. The work, and the exit code, are the
library's (``judge_runs``, ``classify_runs``: one entry, ``replay.derived.run_family``); these only watch and
render."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from p2w_cli.render.classify import outcome_lines, summary_table
from p2w_cli.render.judging import estimate_json, estimates_table, judgment_json, judgment_line
from p2w_cli.render.terminal import cell, markup
from p2w_rt.replay.classify import ClassifyOptions, ClassifyOutcome, ClassifyReport, ClassifySummary, outcome_json
from p2w_rt.replay.derived import PassWatch, RunResult, Tally
from p2w_rt.replay.judges import JudgeOptions, JudgeOutcome, JudgeReport, JudgeSummary
from p2w_runtime.domain import RunInfo


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


def repeated_failures(counts: Tally[Any], err: Console) -> None:
    """Each error that failed more than one result, once, with how many it failed."""
    for error, n in counts.failures.most_common():
        if n > 1:
            err.print(cell(f"  {n} results failed with: {error}", "red"))


class _Bars:
    """One bar per run, made when ``bar`` is first asked for it, advanced with the run's counts so far."""

    def __init__(self, verb: str, console: Console, *, transient: bool) -> None:
        self.verb, self.console, self.transient = verb, console, transient
        self.totals: dict[str, int] = {}
        self.bars: dict[str, tuple[Progress, TaskID, Tally[Any]]] = {}

    def bar(self, info: RunInfo, counts: Tally[Any]) -> tuple[Progress, TaskID, Tally[Any]]:
        if info.run_id not in self.bars:
            progress = pass_progress(self.verb, self.console, transient=self.transient)
            task = progress.add_task(markup(info.label), total=self.totals[info.run_id], state="")
            progress.start()
            self.bars[info.run_id] = (progress, task, counts)
        return self.bars[info.run_id]

    def advance(self, info: RunInfo, outcome: Any) -> tuple[Progress, Tally[Any]]:
        progress, task, counts = self.bars[info.run_id]
        counts.add(outcome)
        progress.update(task, advance=1, state=f"cached {counts.cached} · failed {counts.failed}")
        return progress, counts

    def stop(self, info: RunInfo | None = None) -> None:
        for run_id, (progress, _, _) in self.bars.items():
            if info is None or info.run_id == run_id:
                progress.stop()


class JudgeWatch(PassWatch[JudgeOutcome, JudgeSummary]):
    """``replay``: the bar from the start of the pass, a line per judgment (or its JSON), the closing counts."""

    def __init__(self, options: JudgeOptions, out: Console, err: Console) -> None:
        self.options, self.out, self.err = options, out, err
        self.bars = _Bars("judging", err if options.as_json else out, transient=options.as_json)

    def started(self, run: RunInfo, total: int) -> None:
        self.bars.totals[run.run_id] = total
        self.bars.bar(run, JudgeSummary())

    def outcome(self, run: RunInfo, outcome: JudgeOutcome) -> None:
        progress, counts = self.bars.advance(run, outcome)
        if self.options.as_json:
            row = judgment_json(outcome.judgment, cached=outcome.cached, level=outcome.level)
            self.out.print(json.dumps(row, ensure_ascii=False), markup=False, highlight=False, soft_wrap=True)
        elif counts.first_of_its_kind(outcome):
            progress.console.print(judgment_line(outcome), highlight=False)

    def done(self, result: RunResult[JudgeSummary]) -> None:
        run, summary = result.run, result.summary
        self.bars.stop(run)
        cost = f" · judge cost ${summary.cost_usd:.4f}" if summary.cost_usd else ""
        self.err.print(
            cell(
                f"{run.label}: judged {summary.judged}, cached {summary.cached}, failed {summary.failed}{cost} "
                f"(judgments in stream {result.stream})"
            )
        )
        repeated_failures(summary, self.err)
        if summary.failed and not self.options.retry_failed and not self.options.force:
            self.err.print("failed judgments are kept as they are; --retry-failed judges them again", highlight=False)


def show_estimates(report: JudgeReport, options: JudgeOptions, out: Console) -> None:
    """``replay --dry-run``: the estimates, as a table and the episodes no judge can judge, or JSON lines."""
    if options.as_json:
        for e in report.estimates:
            out.print(json.dumps(estimate_json(e, options.model)), markup=False, highlight=False, soft_wrap=True)
        return
    out.print(estimates_table(report.estimates, options.model))
    for e in report.estimates:
        for problem in e.unjudgeable:
            out.print(cell(f"{e.judge_id}: cannot judge {problem}"))


class ClassifyWatch(PassWatch[ClassifyOutcome, ClassifySummary]):
    """``classify``: a run's bar from its first result, a line per classification (or its JSON), the closing
    counts; with ``--summary`` (or ``--json``) only the bar, on stderr."""

    def __init__(self, options: ClassifyOptions, out: Console, err: Console) -> None:
        self.options, self.out, self.err = options, out, err
        self.quiet = options.as_json or options.summary
        self.bars = _Bars("classifying", err if self.quiet else out, transient=self.quiet)

    def started(self, run: RunInfo, total: int) -> None:
        self.bars.totals[run.run_id] = total

    def outcome(self, run: RunInfo, outcome: ClassifyOutcome) -> None:
        self.bars.bar(run, ClassifySummary(run.run_id, self.options.classifier))
        progress, counts = self.bars.advance(run, outcome)
        if self.options.as_json and not self.options.summary:
            self.out.print(json.dumps(outcome_json(run, outcome)), markup=False, highlight=False, soft_wrap=True)
        elif not self.quiet and counts.first_of_its_kind(outcome):
            for line in outcome_lines(outcome):
                progress.console.print(line, highlight=False)

    def done(self, result: RunResult[ClassifySummary]) -> None:
        run, summary = result.run, result.summary
        self.bars.stop(run)
        self.err.print(
            cell(
                f"{run.label}: classified {summary.classified}, cached {summary.cached}, failed {summary.failed} "
                f"(classifications in stream {result.stream})"
            )
        )
        repeated_failures(summary, self.err)


def show_classify_report(report: ClassifyReport, options: ClassifyOptions, out: Console, err: Console) -> None:
    """``classify --summary`` / ``--plot``: the error summary (a table, or JSON) and where the chart was written."""
    if report.errors is not None and options.summary:
        if options.as_json:
            out.print(json.dumps(report.errors.to_json()), markup=False, highlight=False, soft_wrap=True)
        else:
            out.print(summary_table(report.errors))
    if report.plot is not None:
        err.print(cell(f"plot written to {report.plot}"))
