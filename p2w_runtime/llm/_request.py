"""Request identity and response parsing, independent of the transport.

The fingerprint is what replay keys recorded responses by (with the ordinal),
so it covers everything that changes the answer: model, messages, params
(which include ``response_format``), and nothing that does not (key, endpoint).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from p2w_rt.schemas import LlmCall, LlmUsage, content_hash

MAX_REPLY_BYTES = 16 * 2**20
"""The largest answer body read: far above any answer, far below what strains memory (``_limits``)."""


def fingerprint(model: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    return content_hash({"model": model, "messages": messages, "params": params})


def response_format_param(response_format: dict[str, Any] | type[BaseModel] | None) -> dict[str, Any] | None:
    """A pydantic model becomes a non-strict ``json_schema`` format; strict mode rejects ordinary optional fields."""
    if response_format is None or isinstance(response_format, dict):
        return response_format
    return {
        "type": "json_schema",
        "json_schema": {
            "name": response_format.__name__,
            "schema": response_format.model_json_schema(),
            "strict": False,
        },
    }


class BadResponse(Exception):
    """The body of a 2xx answer is not a usable chat completion."""


@dataclass(frozen=True, slots=True)
class Choice:
    """One choice of an answer that had several."""

    text: str
    finish_reason: str | None


@dataclass(frozen=True, slots=True)
class Completion:
    text: str
    finish_reason: str | None
    usage: LlmUsage | None
    model: str | None
    choices: tuple[Choice, ...] = ()
    """Every choice when the answer had several (``n`` > 1, a Responses answer of several messages), so that a replay
    gives them all; ``text`` and ``finish_reason`` are the first's (the Responses API: all its messages' text).
    Empty for one."""


def json_object(body: str, content_type: str | None) -> dict[str, Any]:
    """An answer's body as a JSON object; ``BadResponse`` saying what it is instead (with its content type)."""
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, RecursionError):  # RecursionError: nested too deep for the parser
        raise BadResponse(f"body is not JSON ({content_type or 'no content type'}): {body[:200]!r}") from None
    if not isinstance(data, dict):
        raise BadResponse(f"body is JSON but not an object: {body[:200]!r}")
    return data


def parse_completion(body: str, content_type: str | None) -> Completion:
    """Parse a chat completion body by hand, so that every malformed shape becomes one clear ``BadResponse``."""
    data = json_object(body, content_type)
    if "error" in data and "choices" not in data:
        raise BadResponse(f"error object in a 2xx answer: {json.dumps(data['error'])[:300]}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise BadResponse(f"no choices in the answer: {body[:200]!r}")
    read = [_choice(choice, "first" if i == 0 else f"choice {i}") for i, choice in enumerate(choices)]
    return Completion(
        text=read[0].text,
        finish_reason=read[0].finish_reason,
        usage=parse_usage(data.get("usage")),
        model=data.get("model") if isinstance(data.get("model"), str) else None,
        choices=tuple(read) if len(read) > 1 else (),
    )


def _choice(choice: Any, which: str) -> Choice:
    """One choice of a chat completion: its text, or its tool calls as text (``tool_calls_text``)."""
    message = choice.get("message") if isinstance(choice, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    if not isinstance(content, str) and isinstance(calls, list) and calls:
        content = tool_calls_text([c.get("function") or {} for c in calls if isinstance(c, dict)])
    if not isinstance(content, str):
        raise BadResponse(f"{which} choice has no text content: {json.dumps(choice)[:200]}")
    finish = choice.get("finish_reason")
    return Choice(content, finish if isinstance(finish, str) else None)


def tool_calls_text(calls: list[dict[str, Any]]) -> str:
    """An answer that calls tools, as the recorded text: ``{"tool_calls": [{"name": ..., "arguments": ...}]}`` (the
    arguments as the model wrote them), so that a tool-calling agent's decisions are in its ``llm.call``."""
    kept = [{"name": c.get("name"), "arguments": c.get("arguments")} for c in calls]
    return json.dumps({"tool_calls": kept}, ensure_ascii=False)


_MAX_COUNT = 2**53
"""Above this a token count is nonsense (and past 2**63 the stored JSON cannot hold it): read as not given."""


def parse_usage(usage: Any) -> LlmUsage | None:
    """Tolerate missing, partial or nonsensical usage (many local servers omit it; a broken one sends -1 or 10**30)."""
    if not isinstance(usage, dict):
        return None
    prompt = _count(usage.get("prompt_tokens"))
    completion = _count(usage.get("completion_tokens"))
    if prompt is None and completion is None:
        return None
    prompt, completion = prompt or 0, completion or 0
    total = _count(usage.get("total_tokens"))
    return LlmUsage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=total or prompt + completion)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_COUNT else None


def completion_of(call: LlmCall) -> Completion:
    """The answer a recorded call got, every choice of it, as the transport returns it (``response`` set)."""
    assert call.response is not None
    choices = tuple(Choice(c.text, c.finish_reason) for c in call.choices or ())
    return Completion(call.response, call.finish_reason, call.usage, call.model, choices)
