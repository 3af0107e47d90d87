"""Recorded text on a rich console: the one place every renderer of ``p2w_cli`` goes through.

Printed as it is, recorded text goes wrong two ways: rich reads ``[zocdoc]`` or ``[red]`` in it as markup (the
text changes or the print fails), and control characters reach the terminal. So:

- ``safe`` (``p2w_cli.render.terminal``) spells control characters as Python escapes and leaves everything else;
- ``cell`` is that text as a rich ``Text`` (never parsed as markup), for table cells and prints;
- ``markup`` is that text escaped for interpolation into a rich markup string;
- ``md_cell`` is that text as one cell of a Markdown table (``|`` escaped);
- ``clip`` (``p2w_runtime.errors.clip``) cuts a long value and says so (``… (N characters)``): no renderer cuts
  text with a bare slice, which ends mid-word with nothing to show it was cut;
- ``terminal_console`` is the console commands print with; piped, it is wide enough that no table cell is
  wrapped or cut (ids stay whole for ``grep`` and ``cut``);
- ``utc_time`` is a recorded time to the second, marked ``Z``: recorded times are UTC, and bare they read as local.

``--json`` output needs none of this (JSON escapes control characters itself).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from p2w_runtime.errors import clip
from p2w_runtime.terminal import safe

PIPE_WIDTH = 1_000_000
"""Console width when the output is not a terminal: tables take their natural width, nothing is cut at 80."""


def cell(value: object, style: str = "") -> Text:
    """Recorded text for a rich table cell or print: control characters escaped, never read as markup."""
    return Text(safe(value), style=style)


def markup(value: object) -> str:
    """Recorded text to interpolate into a rich markup string (``f"[bold]{markup(label)}[/]"``)."""
    return escape(safe(value))


def md_cell(value: object) -> str:
    """Recorded text as one Markdown table cell: ``safe``, its ``|`` escaped (a run label ``a|b`` is one cell)."""
    return safe(value).replace("|", "\\|")


def utc_time(recorded_at: str) -> str:
    """An event's ``recorded_at`` (ISO 8601, UTC) to the second, ``2026-01-31T09:05:00Z``: the ``Z`` says it is not
    the reader's local time. A time without an offset is taken as UTC, as every recorded time is."""
    moment = datetime.fromisoformat(recorded_at)
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def terminal_console(*, stderr: bool = False) -> Console:
    """The console a command prints with: no highlighting, no soft wrapping, and when piped, unlimited width."""
    stream = sys.stderr if stderr else sys.stdout
    piped = not (hasattr(stream, "isatty") and stream.isatty())
    return Console(stderr=stderr, highlight=False, soft_wrap=True, width=PIPE_WIDTH if piped else None)


def print_line(console: Console, line: str) -> None:
    """``console.print(line, highlight=False)`` (``line`` in rich markup), the same text written straight to the file
    when the console cannot style or place it (no color system: piped, or a dumb terminal), where rich's print is
    mostly asking whether it is a terminal; a pass prints one per episode (docs/design/terminal-output.md)."""
    if console.color_system is None and not console.quiet:
        text = console.render_str(line, highlight=False).plain
        if "\t" not in text:  # rich expands tabs as it renders
            console.file.write(text + "\n")
            console.file.flush()
            return
    console.print(line, highlight=False)


def print_rows(
    console: Console,
    headers: Sequence[str],
    rows: Iterable[Sequence[str]],
    widths: Sequence[int],
    *,
    header: bool = True,
    bottom: bool = True,
) -> None:
    """Rows of plain cells (already ``safe``) as the lines of the table ``print_table`` draws, each column ``widths``
    wide: written as they come, a few hundred at a time, so a table of any length starts at once and is never
    held whole (``show RUN TASK`` on a 200,000-step episode). The header and top edge come first unless ``header``
    is False, the bottom edge last unless ``bottom`` is False: a table printed a page at a time is one table.
    Rich lays out a table cell by cell, too slow a row for a long listing (docs/design/summaries.md); these are string
    joins."""
    top = "┏" + "┳".join("━" * (w + 2) for w in widths) + "┓"
    rule = "┡" + "╇".join("━" * (w + 2) for w in widths) + "┩"
    if header:
        names = Text("┃")
        for name, w in zip(headers, widths, strict=True):  # styled as rich styles a header cell, padding and all
            names.append(" ", style="table.header")
            names.append(name + " " * (w - cell_len(name)), style="table.header")
            names.append(" ", style="table.header")
            names.append("┃")
        console.print(top, markup=False, emoji=False, highlight=False)
        console.print(names)
        console.print(rule, markup=False, emoji=False, highlight=False)
    lines: list[str] = []
    for row in rows:
        lines.append("│ " + " │ ".join(c + " " * (w - cell_len(c)) for c, w in zip(row, widths, strict=True)) + " │")
        if len(lines) >= 500:
            console.file.write("\n".join(lines) + "\n")
            lines.clear()
    if bottom:
        lines.append("└" + "┴".join("─" * (w + 2) for w in widths) + "┘")
    if lines:
        console.file.write("\n".join(lines) + "\n")
    console.file.flush()


def print_table(console: Console, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """A table of plain cells (already ``safe``), as rich draws it (``Table(*headers)``), in time linear in its
    cells. When the natural width does not fit the console (a narrow terminal) rich lays it out, wrapping cells."""
    widths = [max([cell_len(h), *(cell_len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    if sum(widths) + 3 * len(widths) + 1 > console.width or any("\n" in c for r in rows for c in r):
        from rich.table import Table  # only then: commands start without it (docs/design/startup.md)

        table = Table(*headers)
        for row in rows:
            table.add_row(*(Text(c) for c in row))
        console.print(table)
        return
    print_rows(console, headers, rows, widths)


__all__ = [
    "PIPE_WIDTH",
    "cell",
    "clip",
    "markup",
    "md_cell",
    "print_rows",
    "print_table",
    "safe",
    "terminal_console",
    "utc_time",
]
