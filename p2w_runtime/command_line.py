"""The ``p2w-rt`` command lines messages tell a user to run, written so that they paste into a POSIX shell as
they read: a run label is any printable line (``my run``, ``a;b``, ``--x``), and one printed bare would split,
run a second command or be taken for an option."""

from __future__ import annotations

import shlex
from collections.abc import Sequence


def command_line(command: str, *arguments: str, options: Sequence[str] = (), db: str | None = None) -> str:
    """``p2w-rt [--db DB] COMMAND ARGUMENTS OPTIONS``, each word quoted for the shell. ``arguments`` are the
    command's own (run labels, tasks; placeholders such as ``DIR`` read as they are); when one starts with ``-``
    the options come first and the arguments after ``--``, where click reads everything as an argument."""
    head = ["p2w-rt", *(() if db is None else ("--db", db)), command]
    if any(argument.startswith("-") for argument in arguments):
        return shlex.join([*head, *options, "--", *arguments])
    return shlex.join([*head, *arguments, *options])
