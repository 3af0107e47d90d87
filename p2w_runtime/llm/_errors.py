"""Why an LLM call gave up; the agent ends the episode with reason ``error`` on any of them."""

from __future__ import annotations

from p2w_runtime.errors import UserError


class LlmError(UserError):
    """Base of every LLM failure; the message names the endpoint and the cause, never the API key."""


class LlmConfigError(LlmError):
    """The client cannot be set up as asked (no API key for OpenAI, unreadable price file, ...)."""


class LlmUnavailable(LlmError):
    """The endpoint timed out, refused, or answered 429/5xx on every attempt."""


class LlmRejected(LlmError):
    """The endpoint refused the request itself (400, 401, 404: bad key, unknown model...); retrying cannot help."""


class LlmBadResponse(LlmError):
    """The endpoint answered, but never with a usable completion (not JSON, no choices, malformed structured output)."""


class LlmTooLong(LlmRejected, LlmBadResponse):
    """The endpoint refused the request as too long for the model's context: another, shorter one may fit, so an
    offline pass fails this episode's result and goes on (as after a bad response) instead of stopping."""
