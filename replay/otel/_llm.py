"""An LLM call's span attributes: the GenAI conventions' names, with OpenInference's beside them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from p2w_rt.replay.otel._otlp import OI_KIND, to_json
from p2w_runtime.domain.trajectory import LlmCallDetail, LlmCallRecord

PROVIDER = "openai"
"""``gen_ai.provider.name`` of every call: the recorder talks to any endpoint through the ``openai`` client, and the
conventions name the client's provider when the server behind it is not known."""

_HTTP_STATUS = re.compile(r"HTTP (\d{3})\b")
_ERROR_PREFIXES = (
    ("timeout", "timeout"),
    ("connection error", "connection_error"),
    ("malformed output", "malformed_output"),
    ("bad response", "malformed_output"),
)
"""How the recorders word a failed call (``p2w_runtime/llm/_retry.py``, the recording transport) -> its kind."""
_REQUEST_PARAMS = {
    "temperature": "gen_ai.request.temperature",
    "top_p": "gen_ai.request.top_p",
    "frequency_penalty": "gen_ai.request.frequency_penalty",
    "presence_penalty": "gen_ai.request.presence_penalty",
    "max_tokens": "gen_ai.request.max_tokens",
    "max_completion_tokens": "gen_ai.request.max_tokens",
    "seed": "gen_ai.request.seed",
}
"""``llm.call`` params -> the request attribute that carries them (``stop``, ``n`` and ``response_format`` below)."""


def error_type(error: str) -> str:
    """``error.type`` of a failed call, from its recorded message: the HTTP status code when the endpoint answered
    one (what the conventions name for HTTP errors), ``timeout``, ``connection_error``, ``malformed_output``; else
    ``_OTHER``."""
    if status := _HTTP_STATUS.match(error):
        return status.group(1)
    for prefix, kind in _ERROR_PREFIXES:
        if error.startswith(prefix):
            return kind
    return "_OTHER"


def _input_messages(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI chat messages as ``gen_ai.input.messages`` parts; a non-text part keeps only its type."""
    converted = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            parts = [{"type": "text", "content": content}]
        else:
            parts = [
                {"type": "text", "content": part.get("text", "")} if part.get("type") == "text" else
                {"type": str(part.get("type", "unknown"))}
                for part in content or [] if isinstance(part, Mapping)
            ]  # fmt: skip
        converted.append({"role": str(message.get("role", "user")), "parts": parts})
    return converted


def _openinference(call: LlmCallRecord, detail: LlmCallDetail, *, content: bool) -> dict[str, Any]:
    """The call under OpenInference's names: model, token counts, and (with content) the messages' text."""
    usage = call.usage
    values: dict[str, Any] = {
        OI_KIND: "LLM",
        "llm.model_name": call.model,
        "llm.token_count.prompt": usage.prompt_tokens if usage else None,
        "llm.token_count.completion": usage.completion_tokens if usage else None,
        "llm.token_count.total": usage.total_tokens if usage else None,
    }
    if content:
        for i, message in enumerate(_input_messages(detail.messages)):
            values[f"llm.input_messages.{i}.message.role"] = message["role"]
            texts = [part["content"] for part in message["parts"] if part.get("type") == "text"]
            values[f"llm.input_messages.{i}.message.content"] = "\n".join(texts)
        if call.response is not None:
            values["llm.output_messages.0.message.role"] = "assistant"
            values["llm.output_messages.0.message.content"] = call.response
    return values


def llm_attributes(call: LlmCallRecord, detail: LlmCallDetail, *, content: bool) -> dict[str, Any]:
    """A ``chat`` span's attributes; ``content`` adds the prompt and the answer."""
    usage, params = call.usage, detail.params
    values: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": PROVIDER,
        "gen_ai.system": PROVIDER,  # the name before gen_ai.provider.name, which older backends still read
        "gen_ai.request.model": call.model,
        "gen_ai.response.finish_reasons": [call.finish_reason] if call.finish_reason else None,
        "gen_ai.usage.input_tokens": usage.prompt_tokens if usage else None,
        "gen_ai.usage.output_tokens": usage.completion_tokens if usage else None,
    }
    for param, value in params.items():
        if param in _REQUEST_PARAMS and isinstance(value, int | float) and not isinstance(value, bool):
            values[_REQUEST_PARAMS[param]] = value
    stop = params.get("stop")
    values["gen_ai.request.stop_sequences"] = (
        [stop] if isinstance(stop, str) else stop if isinstance(stop, list) else None
    )
    if isinstance(n := params.get("n"), int) and n != 1:
        values["gen_ai.request.choice.count"] = n
    if isinstance(fmt := params.get("response_format"), Mapping):
        values["gen_ai.output.type"] = "text" if fmt.get("type") == "text" else "json"
    if call.error is not None:
        values["error.type"] = error_type(call.error)
    if content:
        values["gen_ai.input.messages"] = to_json(_input_messages(detail.messages))
        if call.response is not None:
            answer: dict[str, Any] = {"role": "assistant", "parts": [{"type": "text", "content": call.response}]}
            if call.finish_reason:
                answer["finish_reason"] = call.finish_reason
            values["gen_ai.output.messages"] = to_json([answer])
    return (
        values
        | _openinference(call, detail, content=content)
        | {
            "p2w.llm.role": call.role,
            "p2w.llm.fingerprint": call.fingerprint,
            "p2w.llm.ordinal": call.ordinal,
            "p2w.llm.attempt": call.attempt,
            "p2w.cost_usd": call.cost_usd,
        }
    )
