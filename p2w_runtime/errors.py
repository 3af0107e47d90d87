"""The one base class for errors a user can cause and fix.

The CLI prints their message on one line and exits with ``exit_code``; anything
else is a bug and keeps its traceback.
"""


class UserError(Exception):
    """A bad file, unknown id, unreachable endpoint...: the message names the file, field or id."""

    exit_code: int = 1


ECHO_LIMIT = 120
"""Characters of a user-supplied value an error message repeats: a hostile file must not flood the terminal."""


def clip(value: object, limit: int = ECHO_LIMIT) -> str:
    """``repr``-free text of ``value`` cut to ``limit`` characters, marking the cut."""
    text = str(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"
