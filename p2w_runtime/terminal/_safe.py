"""Recorded text with its control characters spelled out, for any text a terminal shows (the CLI's renderers,
the console log): see ``p2w_cli.render.terminal`` and docs/design/terminal-output.md.

Labels, task ids, queries, page titles, actions and LLM output are written by users, web pages and models.
Printed as they are, control characters reach the terminal: an ESC sequence clears the screen or rewrites the
title, a NUL or newline breaks a table row, a bidi override reverses what a reader sees. ``safe`` spells them as
Python escapes (``\\x1b``, ``\\n``, ``\\x00``, ``\\u202e``) and leaves everything else, brackets included, as
recorded. Backslashes are not doubled: a recorded ``\\n`` (two characters) and an escaped newline print alike,
which is the price of printing Windows paths and regexes as written.
"""

from __future__ import annotations

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
