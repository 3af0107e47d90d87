"""``metrics``' plugin tables (``replay.derived.Table``: a title, columns, rows of cells) as a rich table,
Markdown, CSV or JSON lines; one renderer for every benchmark's tables, so a plugin brings data and no renderer."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table as RichTable

from p2w_cli.render.terminal import cell, md_cell, safe
from p2w_rt.replay.metrics import MISSING, figure, json_figure

if TYPE_CHECKING:
    from p2w_rt.replay.derived import Cell, Table


def _text(value: Cell) -> str:
    if value is None:
        return MISSING
    return figure(value) if isinstance(value, float) else str(value)


def _plain(out: Console, text: str) -> None:
    out.print(text, markup=False, highlight=False, soft_wrap=True)


def show_tables(tables: Sequence[Table], fmt: str, out: Console) -> None:
    """Print ``tables`` as ``fmt`` (table, md, csv, json); a table without rows only in JSON (as nothing)."""
    for table in tables:
        if fmt == "json":
            for row in table.rows:
                values = {
                    c: json_figure(v) if isinstance(v, float) else v for c, v in zip(table.columns, row, strict=True)
                }
                _plain(out, json.dumps({"table": table.name, **values}))
        elif not table.rows:
            continue
        elif fmt == "csv":
            buffer = io.StringIO()
            writer = csv.writer(buffer, lineterminator="\n")
            writer.writerow(table.columns)
            writer.writerows(table.rows)
            _plain(out, buffer.getvalue().rstrip("\n"))
        elif fmt == "md":
            lines = ["| " + " | ".join(map(md_cell, table.columns)) + " |", "|" + "---|" * len(table.columns)]
            lines += ["| " + " | ".join(md_cell(_text(v)) for v in row) + " |" for row in table.rows]
            _plain(out, f"\n{safe(table.title)}\n\n" + "\n".join(lines))
        else:
            drawn = RichTable(title=cell(table.title, "table.title"), title_justify="left")  # text, never markup
            for column in table.columns:
                drawn.add_column(cell(column))
            for row in table.rows:
                drawn.add_row(*(cell(_text(v)) for v in row))
            out.print(drawn)
