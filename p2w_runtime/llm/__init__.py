"""LLM calls over any OpenAI-compatible endpoint, every attempt recorded as an ``llm.call`` payload."""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2w_runtime.lazy import lazy_names

if TYPE_CHECKING:
    from p2w_runtime.llm._client import LlmClient, Sink
    from p2w_runtime.llm._endpoint import check_url
    from p2w_runtime.llm._errors import LlmBadResponse, LlmConfigError, LlmError, LlmRejected, LlmUnavailable
    from p2w_runtime.llm._limits import LimitedTransport
    from p2w_runtime.llm._prices import ModelPrice, PriceTable
    from p2w_runtime.llm._render import render_answer, response_object
    from p2w_runtime.llm._request import (
        MAX_REPLY_BYTES,
        BadResponse,
        Choice,
        Completion,
        completion_of,
        fingerprint,
        parse_usage,
    )
    from p2w_runtime.llm._retry import RetryPolicy
    from p2w_runtime.llm._structured import MalformedOutput
    from p2w_runtime.llm._totals import UsageTotals
    from p2w_runtime.llm._wire import (
        Api,
        WireRequest,
        api_of,
        parse_answer,
        read_request,
    )

__all__ = [
    "Api",
    "WireRequest",
    "api_of",
    "parse_answer",
    "parse_usage",
    "read_request",
    "render_answer",
    "response_object",
    "BadResponse",
    "Choice",
    "Completion",
    "completion_of",
    "LlmBadResponse",
    "LimitedTransport",
    "LlmClient",
    "LlmConfigError",
    "LlmError",
    "LlmRejected",
    "LlmUnavailable",
    "MAX_REPLY_BYTES",
    "MalformedOutput",
    "ModelPrice",
    "PriceTable",
    "RetryPolicy",
    "Sink",
    "UsageTotals",
    "check_url",
    "fingerprint",
]

_LAZY = {
    "LlmClient": "_client",
    "Sink": "_client",
    "LlmBadResponse": "_errors",
    "LlmConfigError": "_errors",
    "LlmError": "_errors",
    "LlmRejected": "_errors",
    "LlmUnavailable": "_errors",
    "LimitedTransport": "_limits",
    "MAX_REPLY_BYTES": "_request",
    "ModelPrice": "_prices",
    "PriceTable": "_prices",
    "BadResponse": "_request",
    "Choice": "_request",
    "Completion": "_request",
    "completion_of": "_request",
    "fingerprint": "_request",
    "check_url": "_endpoint",
    "parse_usage": "_request",
    "RetryPolicy": "_retry",
    "MalformedOutput": "_structured",
    "UsageTotals": "_totals",
    "Api": "_wire",
    "WireRequest": "_wire",
    "api_of": "_wire",
    "parse_answer": "_wire",
    "read_request": "_wire",
    "render_answer": "_render",
    "response_object": "_render",
}
"""Where each exported name lives. They load on first use (``__getattr__``): a command that reads recorded usage
(``UsageTotals``) or only names the client in its types pays nothing for the client and its logging
(docs/design/startup.md)."""


__getattr__ = lazy_names(__name__, _LAZY, globals())
