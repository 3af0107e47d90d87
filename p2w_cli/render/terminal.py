"""Recorded text on a rich console: the one place every renderer of ``p2w_cli`` goes through.

Printed as it is, recorded text goes wrong two ways: rich reads ``[zocdoc]`` or ``[red]`` in it as markup (the
text changes or the print fails), and control characters reach the terminal. So:

- ``safe`` (``p2w_cli.render.terminal``) spells control characters as Python escapes and leaves everything else;
- ``cell`` is that text as a rich ``Text`` (never parsed as markup), for table cells and prints;
- ``markup`` is that text escaped for interpolation into a rich markup string;
- ``clip`` (``p2w_runtime.errors.clip``) cuts a long value and says so (``… (N characters)``): no renderer cuts
  text with a bare slice, which ends mid-word with nothing to show it was cut;
- ``terminal_console`` is the console commands print with; piped, it is wide enough that no table cell is
  wrapped or cut (ids stay whole for ``grep`` and ``cut``).

``--json`` output needs none of this (JSON escapes control characters itself).
"""

from __future__ import annotations

import sys

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


def terminal_console(*, stderr: bool = False) -> Console:
    """The console a command prints with: no highlighting, no soft wrapping, and when piped, unlimited width."""
    stream = sys.stderr if stderr else sys.stdout
    piped = not (hasattr(stream, "isatty") and stream.isatty())
    return Console(stderr=stderr, highlight=False, soft_wrap=True, width=PIPE_WIDTH if piped else None)


__all__ = ["PIPE_WIDTH", "cell", "clip", "markup", "safe", "terminal_console"]
