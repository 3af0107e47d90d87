"""Metric rows as a rich table, Markdown, CSV or JSON, in the paper's Table 5 column order."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence

from rich.table import Table

from p2w_runtime.terminal import cell, safe
from replay.metrics._aggregate import MetricRow

COLUMNS = (("p_web", "P_web"), ("p_pref", "P_pref"), ("p_avg", "P_avg"), ("intent", "Intent"), ("success", "SR"))
FORMATS = ("table", "md", "csv", "json")


def _cell(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _header(rows: Sequence[MetricRow], figures: Sequence[tuple[str, str]]) -> list[str]:
    group = [name for name, _ in rows[0].group] if rows else []
    return [*group, *(title for _, title in figures), "judged"]


def _values(row: MetricRow, figures: Sequence[tuple[str, str]]) -> list[str]:
    group = ["—" if v is None else str(v) for _, v in row.group]
    return [*group, *(_cell(row.figures.get(name)) for name, _ in figures), f"{row.judged}/{row.episodes}"]


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
    lines += ["| " + " | ".join(map(safe, _values(row, figures))) + " |" for row in rows]
    return "\n".join(lines)


def csv_text(rows: Sequence[MetricRow], figures: Sequence[tuple[str, str]] = COLUMNS) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    group = [name for name, _ in rows[0].group] if rows else []
    writer.writerow([*group, *(name if name != "success" else "sr" for name, _ in figures), "judged", "episodes"])
    for row in rows:
        figures_out = ["" if row.figures.get(n) is None else f"{row.figures[n]:.6f}" for n, _ in figures]
        writer.writerow([*("" if v is None else v for _, v in row.group), *figures_out, row.judged, row.episodes])
    return out.getvalue()


def json_lines(rows: Sequence[MetricRow], table: str) -> str:
    return "\n".join(json.dumps({"table": table, **row.as_dict()}, ensure_ascii=False) for row in rows)
