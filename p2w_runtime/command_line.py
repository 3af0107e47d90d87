"""The ``p2w-rt`` command lines messages tell a user to run, written so that they paste into a POSIX shell as
they read: a run label is any printable line (``my run``, ``a;b``, ``--x``), and one printed bare would split,
run a second command or be taken for an option.

A word holding a character that is not printable (a tab, a newline, a bidi control: a label the recording API or
an import let through) is written in bash's ``$'...'`` quoting with that character escaped: printed raw it would
break the line, and the terminal shows it escaped (``p2w_runtime.terminal.safe``), so single quotes would paste
the escape's letters instead of the character.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r", "\\": "\\\\", "'": "\\'"}


def command_line(command: str, *arguments: str, options: Sequence[str] = (), db: str | None = None) -> str:
    """``p2w-rt [--db DB] COMMAND ARGUMENTS OPTIONS``, each word quoted for the shell. ``arguments`` are the
    command's own (run labels, tasks; placeholders such as ``DIR`` read as they are); when one starts with ``-``
    the options come first and the arguments after ``--``, where click reads everything as an argument."""
    head = ["p2w-rt", *(() if db is None else ("--db", db)), command]
    if any(argument.startswith("-") for argument in arguments):
        words = [*head, *options, "--", *arguments]
    else:
        words = [*head, *arguments, *options]
    return " ".join(_quoted(word) for word in words)


def _quoted(word: str) -> str:
    if word.isprintable():
        return shlex.quote(word)
    return "$'" + "".join(_escaped(ch) for ch in word) + "'"


def _escaped(ch: str) -> str:
    """``ch`` inside ``$'...'``: a character that is not printable as its UTF-8 bytes (``\\xe2\\x80\\xae``), which
    bash reads as written in any locale (its ``\\u`` needs a UTF-8 one)."""
    if ch in _NAMED:
        return _NAMED[ch]
    if ch.isprintable():
        return ch
    return "".join(f"\\x{byte:02x}" for byte in ch.encode("utf-8", "surrogatepass"))
