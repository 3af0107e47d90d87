"""LLM calls over any OpenAI-compatible endpoint, every attempt recorded as an ``llm.call`` payload."""

from p2w_runtime.llm._client import LlmClient, LlmResult, Sink
from p2w_runtime.llm._errors import LlmBadResponse, LlmConfigError, LlmError, LlmRejected, LlmUnavailable
from p2w_runtime.llm._prices import ModelPrice, PriceTable
from p2w_runtime.llm._request import BadResponse, Completion, fingerprint
from p2w_runtime.llm._retry import RetryPolicy
from p2w_runtime.llm._structured import MalformedOutput
from p2w_runtime.llm._totals import UsageTotals

__all__ = [
    "BadResponse",
    "Completion",
    "LlmBadResponse",
    "LlmClient",
    "LlmConfigError",
    "LlmError",
    "LlmRejected",
    "LlmResult",
    "LlmUnavailable",
    "MalformedOutput",
    "ModelPrice",
    "PriceTable",
    "RetryPolicy",
    "Sink",
    "UsageTotals",
    "fingerprint",
]
