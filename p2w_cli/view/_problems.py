"""The viewer's refusals: what a page or ``/api/`` route answers with 400 and one line instead of guessing."""

from __future__ import annotations

from collections.abc import Iterable


class BadRequest(ValueError):
    """A query the viewer cannot answer as asked (an unknown judge or filter value, a compare without two runs)."""

    def __init__(self, heading: str, message: str) -> None:
        super().__init__(message)
        self.heading = heading


def known(values: Iterable[object]) -> str:
    """``values`` as a message lists them: ``a, b, c`` or ``none``."""
    return ", ".join(map(str, values)) or "none"
