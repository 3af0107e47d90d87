"""A plugin's metrics tables are data that ``metrics`` renders in every ``--format`` (``p2w_cli/render/tables.py``):
the plugin's text is printed as text (never rich markup, control characters escaped), figures in the metrics' number
format, and a table without rows is left out except as no JSON lines."""

from __future__ import annotations

import io
import json

from rich.console import Console

from p2w_cli.render.tables import show_tables
from p2w_rt.replay.derived import Table

HOSTILE = Table(
    "odd",
    "[red]Plugin[/red] title\x1b[2J",
    ("[b]name", "share"),
    (("[link=http://x.test]a[/link]", 1 / 3), ("b\x07", None)),
)
EMPTY = Table("empty", "Nothing here", ("x",), ())


def shown(fmt: str, *tables: Table) -> str:
    out = Console(file=io.StringIO(), width=200, color_system=None)
    show_tables(tables, fmt, out)
    return out.file.getvalue()  # type: ignore[attr-defined]


def test_a_plugins_text_is_printed_as_text_in_the_table_and_markdown() -> None:
    for fmt in ("table", "md"):
        text = shown(fmt, HOSTILE, EMPTY)
        assert "[red]Plugin[/red] title\\x1b[2J" in text, fmt
        assert "[b]name" in text and "[link=http://x.test]a[/link]" in text and "b\\x07" in text, fmt
        assert "\x1b" not in text and "\x07" not in text, fmt
        assert "0.333" in text and "Nothing here" not in text, fmt


def test_json_lines_and_csv_carry_full_figures() -> None:
    rows = [json.loads(line) for line in shown("json", HOSTILE, EMPTY).splitlines()]
    assert rows == [
        {"table": "odd", "[b]name": "[link=http://x.test]a[/link]", "share": 0.333333},
        {"table": "odd", "[b]name": "b\x07", "share": None},
    ]
    assert shown("csv", HOSTILE, EMPTY).splitlines()[:2] == ["[b]name,share", f"[link=http://x.test]a[/link],{1 / 3}"]


def test_a_pipe_in_a_label_or_a_plugins_cell_stays_in_its_markdown_cell() -> None:
    """``a|b`` would otherwise split its cell, shifting every figure after it one column to the right."""
    from p2w_cli.render.metrics import markdown
    from p2w_rt.replay.metrics import MetricRow

    row = MetricRow((("run", "a|b\nc"),), episodes=2, judged=1, figures={"success_rate": 0.5})
    plugin = Table("pipes", "Pipes", ("who|what", "share"), (("x|y", 0.5),))
    for text in (markdown([row]), shown("md", plugin)):
        lines = [line for line in text.splitlines() if line.startswith("|")]
        assert {line.replace("\\|", "").count("|") for line in lines} == {lines[1].count("|")}, text
    assert "| a\\|b\\nc |" in markdown([row]) and "| x\\|y | 0.500 |" in shown("md", plugin)
