"""The demo's views: each printed under a rule, and the same tables kept as Markdown for ``report.md``.

Each view is the renderer its own command uses (metrics, classify --summary, diff) over ``DemoData``. On the
terminal every column folds a long cell onto more lines rather than cutting it; in the report each rich table
becomes a GitHub pipe table (cells escaped, nothing cut) and each line of text a paragraph.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator

from rich.console import Console, Group, RenderableType
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from p2w_cli.render.classify import summary_table
from p2w_cli.render.diff import render_diff
from p2w_cli.render.metrics import LEVEL_COLUMNS, level_title, rich_table
from p2w_cli.render.terminal import PIPE_WIDTH, cell, markup
from p2w_rt.replay.demo import LLM_JUDGE, RULES_JUDGE, DemoData, DemoReport
from p2w_rt.replay.metrics import MetricsReport

VIEW_WIDTH = 120
"""Width each view is rendered at (and of the rule above it, even when piped output is unlimited)."""


def _text(show: Callable[[Console], None], width: int = VIEW_WIDTH) -> str:
    """What a view prints, as plain text."""
    recorder = Console(record=True, width=width, file=io.StringIO(), color_system=None)
    show(recorder)
    return recorder.export_text()


def _parts(view: RenderableType) -> Iterator[RenderableType]:
    """The tables and lines of a view, in order (groups opened)."""
    if isinstance(view, Group):
        for part in view.renderables:
            yield from _parts(part)
    else:
        yield view


def _folded(view: RenderableType) -> RenderableType:
    """The view with every table column folding long cells (a URL wraps whole instead of ending in "…")."""
    for part in _parts(view):
        if isinstance(part, Table):
            for column in part.columns:
                column.overflow = "fold"
    return view


def _show(out: Console, title: str, view: RenderableType) -> None:
    """Print one view under a rule, at the demo's width."""
    text = _text(lambda c: c.print(_folded(view)))
    out.print(Rule(markup(title)), width=min(out.width, VIEW_WIDTH))
    out.print(text.rstrip(), markup=False, highlight=False, soft_wrap=True)


def _md_escape(text: str) -> str:
    """Text as one Markdown table cell or line: ``\\``, ``|`` and ``<`` escaped, line breaks as ``<br>``."""
    escaped = text.replace("\\", "\\\\").replace("|", "\\|").replace("<", "\\<")
    return "<br>".join(line.strip() for line in escaped.splitlines())


def _plain(value: RenderableType | None) -> str:
    """A cell, header or title as plain text (strings read as rich markup, as the table read them)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return Text.from_markup(value).plain
    if isinstance(value, Text):
        return value.plain
    return _text(lambda c: c.print(value), PIPE_WIDTH).rstrip("\n")


def _pipe_table(table: Table) -> list[str]:
    """A rich table as a GitHub pipe table: its title in bold above, a header row, ``---``, one row per row."""

    def row(cells: list[str]) -> str:
        return "| " + " | ".join(_md_escape(c) for c in cells) + " |"

    lines = [f"**{_md_escape(_plain(table.title))}**", ""] if table.title else []
    columns = [list(column.cells) for column in table.columns]
    lines += [row([_plain(c.header) for c in table.columns]), "|" + "|".join("---" for _ in columns) + "|"]
    lines += [row([_plain(column[i]) for column in columns]) for i in range(table.row_count)]
    return lines


def markdown_of(view: RenderableType) -> str:
    """A view as Markdown: tables as pipe tables, anything else as an escaped paragraph."""
    blocks = [_pipe_table(p) if isinstance(p, Table) else [_md_escape(_plain(p))] for p in _parts(view)]
    return "\n\n".join("\n".join(block) for block in blocks)


def _metric_tables(report: MetricsReport) -> RenderableType:
    """The tables ``metrics --format table`` prints (the main one, then by level)."""
    tables = [rich_table(report.rows, "Table 5 layout: means over judged episodes")]
    if report.level_rows:
        tables.append(rich_table(report.level_rows, level_title(report.level_rows), LEVEL_COLUMNS))
    return Group(*tables)


def show_demo(data: DemoData, out: Console, err: Console) -> DemoReport:
    """Print every view of ``data``; returns the report, not yet written."""
    report = DemoReport(data.db)
    for info, judge, summary in data.judged:
        done = f"{summary.cached} cached" if judge == RULES_JUDGE else f"{summary.failed} failed"
        err.print(cell(f"judged {info.label} with {judge}: {summary.judged} new, {done}"))
    rules = (f"Metrics ({RULES_JUDGE})", _metric_tables(data.rules_metrics))
    _show(out, *rules)
    if data.rules_metrics.plot is not None:
        err.print(cell(f"plot written to {data.rules_metrics.plot}"))
    views = [rules]
    if (llm := data.llm_metrics) is not None:
        views.append((f"Metrics ({LLM_JUDGE})", _metric_tables(llm)))
    err.print(cell(f"plot written to {data.errors_png}"))
    errors = ("Personalization errors (rules classifier)", summary_table(data.errors))
    _show(out, *errors)
    views.append(errors)
    if (diff := data.diff) is not None:
        changed = (f"What changed from {diff.a.source} to {diff.b.source}", render_diff(diff))
        _show(out, *changed)
        views.append(changed)
    report.sections += [(_md_escape(title), markdown_of(view)) for title, view in views]
    png = data.rules_metrics.plot
    if png is not None:
        report.images.append(("Success and P_avg by ambiguity level", png))
    report.images.append(("Error types by run", data.errors_png))
    return report
