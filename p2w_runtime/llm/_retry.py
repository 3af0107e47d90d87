"""Which failures are worth another attempt, and how long to wait before it."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from p2w_runtime.llm._request import BadResponse

if TYPE_CHECKING:
    import openai

_RETRIED_STATUSES = frozenset({408, 409, 429})
_TOO_LONG = re.compile(r"context[ _](length|window)|prompt is too long|too many (input )?tokens", re.IGNORECASE)
"""How OpenAI, vLLM, Azure and LiteLLM word a 400 for a prompt over the model's context."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Bounded exponential backoff with a little jitter, so concurrent episodes do not retry in lockstep.

    ``max_retries`` counts attempts after the first; a server's ``Retry-After`` is honoured up to ``max_delay_s``.
    """

    max_retries: int = 4
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0
    jitter: float = 0.1

    def __post_init__(self) -> None:
        if self.max_retries < 0 or self.base_delay_s < 0 or self.max_delay_s < 0:
            raise ValueError("retry settings must be >= 0")

    def delay(self, failed_attempt: int, retry_after: float | None = None) -> float:
        backoff = min(self.max_delay_s, self.base_delay_s * 2 ** (failed_attempt - 1))
        if retry_after is not None:
            backoff = max(backoff, min(retry_after, self.max_delay_s))
        return backoff * (1 + random.random() * self.jitter)


@dataclass(frozen=True, slots=True)
class Failure:
    """One failed attempt as recorded: a readable message, and whether another attempt may succeed."""

    message: str
    retriable: bool
    bad_response: bool = False
    retry_after: float | None = None
    too_long: bool = False
    """The request does not fit the model's context: this input's failure, not the endpoint's."""


def describe(exc: Exception, timeout_s: float | None) -> Failure:
    """``exc`` is a ``BadResponse``, a ``TimeoutError`` or an ``openai.APIError``: the openai package is loaded once
    a client exists."""
    import openai

    if isinstance(exc, BadResponse):
        return Failure(f"bad response: {exc}", retriable=True, bad_response=True)
    if isinstance(exc, TimeoutError | openai.APITimeoutError):  # the deadline on the whole answer, or one read's
        return Failure(f"timeout after {timeout_s:g}s" if timeout_s else "timeout", retriable=True)
    if isinstance(exc, openai.APIConnectionError):
        return Failure(f"connection error: {_cause(exc)}", retriable=True)
    if isinstance(exc, openai.APIStatusError):
        status, message = exc.status_code, _server_message(exc)
        return Failure(
            f"HTTP {status}: {message}",
            retriable=status in _RETRIED_STATUSES or status >= 500,
            retry_after=_retry_after(exc),
            too_long=status == 413 or (status == 400 and _TOO_LONG.search(message) is not None),
        )
    return Failure(f"{type(exc).__name__}: {exc}", retriable=False)


def _cause(exc: BaseException) -> str:
    """The first message down the cause chain: the HTTP library wraps a reset connection's OS error in empty ones."""
    cause = exc.__cause__ or exc.__context__
    for _ in range(10):  # a chain is a few links long; a cycle is not followed for ever
        if cause is None or str(cause):
            break
        cause = cause.__cause__ or cause.__context__
    return str(cause or exc)


def _server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"]
    text = exc.response.text if exc.response is not None else ""
    return text[:300] or exc.message


def _retry_after(exc: openai.APIStatusError) -> float | None:
    value = exc.response.headers.get("retry-after") if exc.response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
