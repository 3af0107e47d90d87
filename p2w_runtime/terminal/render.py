"""Recorded text made safe for a terminal: the one place every renderer (``p2w_cli``, ``replay``) goes through.

Labels, task ids, queries, page titles, actions and LLM output are written by users, web pages and models. Printed
as they are, two things go wrong: rich reads ``[zocdoc]`` or ``[red]`` in them as markup (the text changes or the
print fails), and control characters reach the terminal (an ESC sequence clears the screen or rewrites the title,
a NUL or newline breaks a table row, a bidi override reverses what a reader sees). So:

- ``safe`` spells control characters as Python escapes (``\\x1b``, ``\\n``, ``\\x00``, ``\\u202e``) and leaves
  everything else, brackets included, as recorded;
- ``cell`` is that text as a rich ``Text`` (never parsed as markup), for table cells and prints;
- ``markup`` is that text escaped for interpolation into a rich markup string;
- ``terminal_console`` is the console commands print with; piped, it is wide enough that no table cell is
  wrapped or cut (ids stay whole for ``grep`` and ``cut``).

Backslashes are not doubled: a recorded ``\\n`` (two characters) and an escaped newline print alike, which is the
price of printing Windows paths and regexes as written. ``--json`` output needs none of this (JSON escapes
control characters itself).
"""

from __future__ import annotations

import sys

from rich.console import Console
from rich.markup import escape
from rich.text import Text

PIPE_WIDTH = 1_000_000
"""Console width when the output is not a terminal: tables take their natural width, nothing is cut at 80."""

_NAMED = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}
_BIDI_AND_SEPARATORS = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028, 0x2029)
_ESCAPES: dict[int, str] = {
    **{c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7F, 0xA0))},
    **{c: f"\\u{c:04x}" for c in _BIDI_AND_SEPARATORS},
    **_NAMED,
}
"""C0 and C1 control characters, DEL, bidi controls and line separators -> a visible escape."""


def safe(value: object) -> str:
    """``value`` as text with every control character spelled out; markup brackets are left as they are."""
    return str(value).translate(_ESCAPES)


def cell(value: object, style: str = "") -> Text:
    """Recorded text for a rich table cell or print: control characters escaped, never read as markup."""
    return Text(safe(value), style=style)


def markup(value: object) -> str:
    """Recorded text to interpolate into a rich markup string (``f"[bold]{markup(label)}[/]"``)."""
    return escape(safe(value))


def terminal_console(*, stderr: bool = False) -> Console:
    """The console a command prints with: no highlighting, no soft wrapping, and when piped, unlimited width."""
    stream = sys.stderr if stderr else sys.stdout
    piped = not (hasattr(stream, "isatty") and stream.isatty())
    return Console(stderr=stderr, highlight=False, soft_wrap=True, width=PIPE_WIDTH if piped else None)
