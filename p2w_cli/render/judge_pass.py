"""How ``replay`` shows a judging pass: the bar from the start, one line per judgment as it lands (a failure shown
once per distinct error, then counted) or its JSON, the closing counts; and ``--dry-run``'s estimates."""

from __future__ import annotations

import json

from rich.console import Console

from p2w_cli.render.judging import estimate_json, estimates_table, judgment_json, judgment_line
from p2w_cli.render.passes import Bars, repeated_failures
from p2w_cli.render.terminal import cell, print_line
from p2w_rt.replay.derived import PassWatch, RunResult
from p2w_rt.replay.judges import JudgeOptions, JudgeOutcome, JudgeReport, JudgeSummary
from p2w_runtime.domain import RunInfo


class JudgeWatch(PassWatch[JudgeOutcome, JudgeSummary]):
    """``replay``: the bar from the start of the pass, a line per judgment (or its JSON), the closing counts."""

    def __init__(self, options: JudgeOptions, out: Console, err: Console) -> None:
        self.options, self.out, self.err = options, out, err
        self.bars = Bars("judging", "judged", err if options.as_json else out, transient=options.as_json)

    def started(self, run: RunInfo, total: int) -> None:
        self.bars.totals[run.run_id] = total
        self.bars.bar(run, JudgeSummary())

    def outcome(self, run: RunInfo, outcome: JudgeOutcome) -> None:
        progress, counts = self.bars.advance(run, outcome)
        if self.options.as_json:
            row = judgment_json(outcome.judgment, cached=outcome.cached, level=outcome.level)
            self.out.print(json.dumps(row, ensure_ascii=False), markup=False, highlight=False, soft_wrap=True)
        elif counts.first_of_its_kind(outcome):
            print_line(progress.console, judgment_line(outcome))

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
