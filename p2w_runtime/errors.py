"""The one base class for errors a user can cause and fix.

The CLI prints their message on one line and exits with ``exit_code``; anything
else is a bug and keeps its traceback.
"""


class UserError(Exception):
    """A bad file, unknown id, unreachable endpoint...: the message names the file, field or id."""

    exit_code: int = 1
