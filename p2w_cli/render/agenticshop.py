"""``metrics``' AgenticShop tables as text: a rich table, Markdown, CSV or JSON lines."""

from __future__ import annotations

import csv
import io
import json

from rich.console import Console
from rich.table import Table

from p2w_cli.render.terminal import cell
from p2w_rt.replay.metrics import MISSING, figure, json_figure

TITLES = {
    "by_variant": "AgenticShop: score by query variant and intent type (mean over users; valid/invalid/"
    "irrelevant: attribution shares)",
    "per_dimension": "AgenticShop: checklist items satisfied per dimension",
    "hit_ratio": "AgenticShop: hit ratio per user (by_variant's hit_ratio is the mean over the hit_users that have "
    "one; not_computed: what the profile lacks)",
}


def _text(value: object) -> str:
    if value is None:
        return MISSING
    return figure(value) if isinstance(value, float) else str(value)


def show_shop_tables(data: dict[str, list[dict[str, object]]], fmt: str, out: Console) -> None:
    """Print ``replay.agenticshop._tables.shop_tables``' tables as ``fmt`` (table, md, csv, json)."""
    if fmt == "json":
        for name, items in data.items():
            for item in items:
                row = {k: json_figure(v) if isinstance(v, float) else v for k, v in item.items()}
                out.print(json.dumps({"table": name, **row}), markup=False, highlight=False, soft_wrap=True)
        return
    for name, items in data.items():
        if not items:
            continue
        columns = list(items[0])
        if fmt == "csv":
            buffer = io.StringIO()
            writer = csv.DictWriter(buffer, columns, lineterminator="\n")
            writer.writeheader()
            writer.writerows(items)
            out.print(buffer.getvalue().rstrip("\n"), markup=False, highlight=False, soft_wrap=True)
        elif fmt == "md":
            lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
            lines += ["| " + " | ".join(_text(i[c]) for c in columns) + " |" for i in items]
            out.print(f"\n{TITLES[name]}\n\n" + "\n".join(lines), markup=False, highlight=False, soft_wrap=True)
        else:
            table = Table(*columns, title=TITLES[name], title_justify="left")
            for i in items:
                table.add_row(*(cell(_text(i[c])) for c in columns))
            out.print(table)
