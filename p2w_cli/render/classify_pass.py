"""How ``classify`` shows a classifying pass: a run's bar from its first result, one line per classification (or its
JSON), the closing counts; and ``--summary`` / ``--plot``'s report."""

from __future__ import annotations

import json

from rich.console import Console

from p2w_cli.render.classify import outcome_lines, summary_table
from p2w_cli.render.passes import Bars, repeated_failures
from p2w_cli.render.terminal import cell, print_line
from p2w_rt.replay.classify import ClassifyOptions, ClassifyOutcome, ClassifyReport, ClassifySummary, outcome_json
from p2w_rt.replay.derived import PassWatch, RunResult
from p2w_runtime.domain import RunInfo


class ClassifyWatch(PassWatch[ClassifyOutcome, ClassifySummary]):
    """``classify``: a run's bar from its first result, a line per classification (or its JSON), the closing
    counts; with ``--summary`` (or ``--json``) only the bar, on stderr."""

    def __init__(self, options: ClassifyOptions, out: Console, err: Console) -> None:
        self.options, self.out, self.err = options, out, err
        self.quiet = options.as_json or options.summary
        self.bars = Bars("classifying", "classified", err if self.quiet else out, transient=self.quiet)

    def started(self, run: RunInfo, total: int) -> None:
        self.bars.totals[run.run_id] = total

    def outcome(self, run: RunInfo, outcome: ClassifyOutcome) -> None:
        self.bars.bar(run, ClassifySummary(run.run_id, self.options.classifier))
        progress, counts = self.bars.advance(run, outcome)
        if self.options.as_json and not self.options.summary:
            self.out.print(json.dumps(outcome_json(run, outcome)), markup=False, highlight=False, soft_wrap=True)
        elif not self.quiet and counts.first_of_its_kind(outcome):
            for line in outcome_lines(outcome):
                print_line(progress.console, line)

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
