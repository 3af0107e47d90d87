"""The model call's payload (``llm.call``) and its parts: kept apart from ``_payloads.py``, which holds the rest of an
episode's payloads, for size."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from p2w_rt.schemas._payload_base import LlmRole, Payload
from p2w_rt.schemas._upcast import register_upcaster


class LlmUsage(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class LlmChoice(BaseModel):
    """One of an answer's several choices: its text and why it ended."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    text: str
    finish_reason: str | None = None


class LlmCall(Payload):
    SCHEMA_VERSION: ClassVar[int] = 2

    type: Literal["llm.call"] = "llm.call"
    role: LlmRole
    model: str
    step: int | None = None
    messages: list[dict[str, Any]]
    params: dict[str, Any] = Field(default_factory=dict)
    response: str | None = None
    finish_reason: str | None = None
    usage: LlmUsage | None = None
    latency_s: float
    fingerprint: str
    ordinal: int = Field(ge=0, description="How many earlier calls in the episode had this fingerprint.")
    attempt: int = 1
    error: str | None = None
    cost_usd: float | None = None
    choices: list[LlmChoice] | None = None
    """v2: an answer's choices when it had several (``n`` > 1; a Responses answer of several messages), so that a
    replay gives them all; ``response`` stays what a reader takes (the first; the Responses API's ``output_text``)."""


@register_upcaster("llm.call", 1)
def _llm_call_one_choice(payload: dict[str, Any]) -> dict[str, Any]:
    """v1 kept the first choice only: its calls are read as answers of one."""
    return {**payload, "choices": None}
