"""LLM calls over any OpenAI-compatible endpoint, every attempt recorded as an ``llm.call`` payload."""

from p2w_runtime.llm._client import LlmClient, Sink
from p2w_runtime.llm._errors import LlmBadResponse, LlmConfigError, LlmError, LlmRejected, LlmUnavailable
from p2w_runtime.llm._prices import ModelPrice, PriceTable
from p2w_runtime.llm._request import BadResponse, Completion, fingerprint, parse_usage
from p2w_runtime.llm._retry import RetryPolicy
from p2w_runtime.llm._structured import MalformedOutput
from p2w_runtime.llm._totals import UsageTotals
from p2w_runtime.llm._wire import Api, WireRequest, api_of, parse_answer, read_request, render_answer, response_object

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
    "Completion",
    "LlmBadResponse",
    "LlmClient",
    "LlmConfigError",
    "LlmError",
    "LlmRejected",
    "LlmUnavailable",
    "MalformedOutput",
    "ModelPrice",
    "PriceTable",
    "RetryPolicy",
    "Sink",
    "UsageTotals",
    "fingerprint",
]
