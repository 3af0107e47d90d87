"""The demo's views: each printed under a rule and kept as plain text for ``report.md``.

Each view is the renderer its own command uses (metrics, classify --summary, diff) over ``DemoData``.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Callable

from rich.console import Console
from rich.rule import Rule

from p2w_cli.render.classify import summary_table
from p2w_cli.render.diff import render_diff
from p2w_cli.render.metrics import show_metrics
from p2w_cli.render.terminal import cell, markup
from replay.demo import LLM_JUDGE, RULES_JUDGE, DemoData, DemoReport

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


def show_demo(data: DemoData, out: Console, err: Console) -> DemoReport:
    """Print every view of ``data``; returns the report, not yet written."""
    report = DemoReport(data.db)
    for info, judge, summary in data.judged:
        done = f"{summary.cached} cached" if judge == RULES_JUDGE else f"{summary.failed} failed"
        err.print(cell(f"judged {info.label} with {judge}: {summary.judged} new, {done}"))
    rules, quiet = data.rules_metrics, dataclasses.replace(data.rules_metrics, plot=None)
    _shown(f"Metrics ({RULES_JUDGE})", out, lambda c: show_metrics(rules, "table", c, err))
    report.sections.append((f"Metrics ({RULES_JUDGE})", _text(lambda c: show_metrics(quiet, "md", c, err), 200), "md"))
    if (llm := data.llm_metrics) is not None:
        report.sections.append((f"Metrics ({LLM_JUDGE})", _text(lambda c: show_metrics(llm, "md", c, err), 200), "md"))
    err.print(cell(f"plot written to {data.errors_png}"))
    title = "Personalization errors (rules classifier)"
    report.sections.append((title, _shown(title, out, lambda c: c.print(summary_table(data.errors))), "text"))
    if (diff := data.diff) is not None:
        title = f"What changed from {diff.a.source} to {diff.b.source}"
        report.sections.append((title, _shown(title, out, lambda c: c.print(render_diff(diff))), "text"))
    png = data.rules_metrics.plot
    if png is not None:
        report.images.append(("Success and P_avg by ambiguity level", png))
    report.images.append(("Error types by run", data.errors_png))
    return report
