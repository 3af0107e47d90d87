"""Errors a user can cause in the browser layer, printed by the CLI as one line."""

from __future__ import annotations

from p2w_runtime.errors import UserError


class BrowserUnavailable(UserError):
    """No usable Chromium, or it would not start; the message says what was tried and how to fix it."""


class BrowserGone(RuntimeError):
    """The episode's Chromium exited (killed, crashed) while the episode ran: it ends in error, the run goes on."""


def first_line(exc: BaseException) -> str:
    """The headline of a Playwright error (its call log follows on later lines)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
