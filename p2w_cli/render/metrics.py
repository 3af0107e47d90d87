"""Metric rows as a rich table, Markdown, CSV or JSON, in the paper's Table 5 column order.

Names and number format are ``replay.metrics._figures``'s: fractions with three decimals in tables, full
precision in CSV and JSON.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from p2w_cli.render.terminal import cell, md_cell
from p2w_cli.render.words import counted
from p2w_rt.replay.metrics import METRICS, TITLES, MetricRow, MetricsReport, Outdated, Unjudged, figure, json_figure
from p2w_runtime.command_line import command_line

COLUMNS = tuple((name, TITLES[name]) for name in METRICS)
LEVEL_COLUMNS = (("success_rate", "SR"), ("p_avg", "P_avg"))
FORMATS = ("table", "md", "csv", "json")


def _header(rows: Sequence[MetricRow], figures: Sequence[tuple[str, str]]) -> list[str]:
    group = [name for name, _ in rows[0].group] if rows else []
    return [*group, *(title for _, title in figures), "judged"]


def _values(row: MetricRow, figures: Sequence[tuple[str, str]]) -> list[str]:
    group = ["-" if v is None else str(v) for _, v in row.group]
    return [*group, *(figure(row.figures.get(name)) for name, _ in figures), f"{row.judged}/{row.episodes}"]


def rich_table(rows: Sequence[MetricRow], title: str, figures: Sequence[tuple[str, str]] = COLUMNS) -> Table:
    table = Table(title=title, title_justify="left")
    for i, name in enumerate(_header(rows, figures)):
        group_columns = len(rows[0].group) if rows else 0
        table.add_column(name, justify="left" if i < group_columns else "right")
    for row in rows:
        values = _values(row, figures)
        table.add_row(*map(cell, values))
    return table


def markdown(rows: Sequence[MetricRow], figures: Sequence[tuple[str, str]] = COLUMNS) -> str:
    header = _header(rows, figures)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(map(md_cell, _values(row, figures))) + " |" for row in rows]
    return "\n".join(lines)


def csv_text(rows: Sequence[MetricRow], figures: Sequence[tuple[str, str]] = COLUMNS) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    group = [name for name, _ in rows[0].group] if rows else []
    writer.writerow([*group, *(name for name, _ in figures), "judged", "episodes"])
    for row in rows:
        figures_out = ["" if (v := json_figure(row.figures.get(n))) is None else v for n, _ in figures]
        writer.writerow([*("" if v is None else v for _, v in row.group), *figures_out, row.judged, row.episodes])
    return out.getvalue()


def json_lines(rows: Sequence[MetricRow], table: str) -> str:
    return "\n".join(json.dumps({"table": table, **row.as_dict()}, ensure_ascii=False) for row in rows)


LEVEL_NAMES = {0: "explicit", 1: "partly ambiguous", 2: "most ambiguous"}
"""Persona2Web's ambiguity levels (level 0 states the website and preferences in the query)."""


def level_title(rows: Sequence[MetricRow]) -> str:
    """The by-level table's title, naming only the levels its rows hold (no "0 = explicit" above levels 1 and 2)."""
    levels = sorted({v for row in rows for k, v in row.group if k == "level" and isinstance(v, int)})
    names = ", ".join(f"{n} = {LEVEL_NAMES[n]}" for n in levels if n in LEVEL_NAMES)
    return f"By ambiguity level ({names})" if names else "By ambiguity level"


def outdated_hint(o: Outdated) -> str:
    """The line saying which episodes a table left out for their judge's version, and how to judge them again."""
    them = "it is" if o.episodes == 1 else "they are"
    others = ", ".join(o.others)
    again = command_line("replay", o.run, options=("--judge", o.judge))
    return (
        f"{o.run}: {counted(o.episodes, 'episode')} judged by {o.judge} only at version {others}, not {o.version}: "
        f"{them} left out of its figures; judge again: {again}"
    )


def unjudged_hint(u: Unjudged) -> str:
    """The line saying a run has no figure, and the ``replay`` that gives it some: with ``--retry-failed`` when its
    judgments failed, as ``replay`` keeps a failure otherwise."""
    if u.failed:
        options = [*(word for judge in u.failed for word in ("--judge", judge)), "--retry-failed"]
        again = command_line("replay", u.run, options=options)
        return (
            f"{u.run}: no judgment of its episodes, {', '.join(u.failed)} failed on them: judge them again with {again}"
        )
    by = f" by {u.judge}" if u.judge else ""
    judge = command_line("replay", u.run, options=("--judge", u.judge or "ID"))
    return f"{u.run}: no judgment{by} yet: judge its episodes with {judge}"


def show_metrics(report: MetricsReport, fmt: str, out: Console, err: Console) -> None:
    """Print the report as ``fmt`` (table, md, csv, json); hints and the plot's path go to ``err``."""
    rows, level_rows = report.rows, report.level_rows
    if fmt == "table":
        out.print(rich_table(rows, "Table 5 layout: means over judged episodes"))
        if level_rows:
            out.print(rich_table(level_rows, level_title(level_rows), LEVEL_COLUMNS))
    elif fmt == "md":
        out.print(markdown(rows), markup=False, highlight=False, soft_wrap=True)
        if level_rows:
            out.print("\n" + markdown(level_rows, LEVEL_COLUMNS), markup=False, highlight=False, soft_wrap=True)
    elif fmt == "csv":  # one CSV, one header: the level breakdown is its own table (--by ...,level)
        out.print(csv_text(rows).rstrip("\n"), markup=False, highlight=False, soft_wrap=True)
        if report.several_levels and "level" not in report.group_by:
            err.print("CSV holds the main table only; add level to --by for the breakdown by level", highlight=False)
    else:
        text = "\n".join(filter(None, (json_lines(rows, "main"), json_lines(level_rows, "by_level"))))
        out.print(text, markup=False, highlight=False, soft_wrap=True)
    for outdated in report.outdated:
        err.print(cell(outdated_hint(outdated)), highlight=False)
    for empty in report.empty:
        err.print(cell(f"{empty}: nothing to judge, so no row"), highlight=False)
    for unjudged in report.unjudged:
        err.print(cell(unjudged_hint(unjudged)), highlight=False)
    if report.plot:
        err.print(cell(f"plot written to {report.plot}"))
