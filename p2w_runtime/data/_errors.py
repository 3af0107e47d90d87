"""The one exception for bad dataset files, so the CLI can print it as a single line."""

from __future__ import annotations

from p2w_runtime.errors import UserError


class DataError(UserError, ValueError):
    """A dataset file (task, memory bank) a user supplied is missing or malformed; the message names file and field."""
