"""The demo's views: each printed under a rule and kept as plain text for ``report.md``.

Each view is the same library call and renderer its own command uses (metrics, classify --summary, diff).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console
from rich.rule import Rule

from p2w_runtime.store import Recorder, find_run
from p2w_runtime.terminal import cell, markup
from replay.classify import ClassifyOptions, classify_runs, plot_summary, summarize, summary_table
from replay.demo._prepare import LLM_JUDGE, RULES_JUDGE, DemoReport, judge_demo_runs
from replay.derived import JudgeSettings, LlmFactory
from replay.diff import diff_refs, render_diff
from replay.metrics import metrics_report, show_metrics

VIEW_WIDTH = 120
"""Width each view is rendered at (and of the rule above it, even when piped output is unlimited)."""


def _text(show: Callable[[Console], None], width: int = VIEW_WIDTH) -> str:
    """What a view prints, as plain text."""
    recorder = Console(record=True, width=width, file=io.StringIO(), color_system=None)
    show(recorder)
    return recorder.export_text()


def _shown(title: str, out: Console, show: Callable[[Console], None]) -> str:
    """Print one view under a rule, and return its plain text for the report."""
    text = _text(show)
    out.print(Rule(markup(title)), width=min(out.width, VIEW_WIDTH))
    out.print(text.rstrip(), markup=False, highlight=False, soft_wrap=True)
    return text


async def run_demo(
    store: Recorder,
    db: Path,
    runs: Sequence[str],
    *,
    out_dir: Path,
    out: Console,
    err: Console,
    llm_judged: Sequence[str] = (),
    llm_settings: JudgeSettings | None = None,
    llm_factory: LlmFactory | None = None,
) -> DemoReport:
    """Judge, classify and diff ``runs`` (labels); the first two are diffed. Returns the report, not yet written."""
    report = DemoReport(db)
    judged = await judge_demo_runs(
        store, runs, llm_judged=llm_judged, llm_settings=llm_settings, llm_factory=llm_factory
    )
    for info, judge, summary in judged:
        done = f"{summary.cached} cached" if judge == RULES_JUDGE else f"{summary.failed} failed"
        err.print(cell(f"judged {info.label} with {judge}: {summary.judged} new, {done}"))
    levels_png = out_dir / "levels.png"
    errors_png = out_dir / "errors.png"
    by = ("run", "model", "scheme")
    rules = await metrics_report(store, runs, judge=RULES_JUDGE, by=by, plot=levels_png)
    _shown(f"Metrics ({RULES_JUDGE})", out, lambda c: show_metrics(rules, "table", c, err))
    report.sections.append((f"Metrics ({RULES_JUDGE})", _text(lambda c: show_metrics(rules, "md", c, err), 200), "md"))
    if llm_judged:
        llm = await metrics_report(store, runs, judge=LLM_JUDGE, by=by, plot=None)
        report.sections.append((f"Metrics ({LLM_JUDGE})", _text(lambda c: show_metrics(llm, "md", c, err), 200), "md"))
    infos = [await find_run(store, ref) for ref in runs]
    classified = await classify_runs(store, infos, ClassifyOptions())
    errors = summarize(classified, per_run=True)
    err.print(cell(f"plot written to {plot_summary(errors, errors_png)}"))
    title = "Personalization errors (rules classifier)"
    report.sections.append((title, _shown(title, out, lambda c: c.print(summary_table(errors))), "text"))
    if len(infos) >= 2:
        title = f"What changed from {infos[0].label} to {infos[1].label}"
        diff = await diff_refs(db, infos[0].label, infos[1].label, judge=RULES_JUDGE)
        report.sections.append((title, _shown(title, out, lambda c: c.print(render_diff(diff))), "text"))
    report.images += [("Success and P_avg by ambiguity level", levels_png), ("Error types by run", errors_png)]
    return report
