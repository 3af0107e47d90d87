"""The OpenAI wire formats beyond one chat completion: streamed chat chunks and the Responses API.

Parsed into the one ``Completion`` the recording keeps (text, finish reason, usage, model), and rendered back
from it, so a recorded call can answer a request in whichever format it was asked in (``p2w_runtime.recording``),
and the scripted server can speak them (``p2w_runtime.testing``). A request's identity (model, messages,
params) is read here too, so that a streamed call and a Responses call are fingerprinted like a chat completion.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from p2w_rt.schemas import LlmUsage
from p2w_runtime.llm._request import (
    BadResponse,
    Completion,
    json_object,
    parse_completion,
    parse_usage,
    tool_calls_text,
)

Api = Literal["chat", "responses"]
_TRANSPORT_ONLY = frozenset({"stream", "stream_options"})
"""How the answer travels, not what it says: left out of the params, so a streamed call keys as an unstreamed one."""


@dataclass(frozen=True, slots=True)
class WireRequest:
    """What identifies one request, whatever API it used: the fingerprint's inputs, and how to answer it."""

    api: Api
    model: str
    messages: list[dict[str, Any]]
    params: dict[str, Any]
    stream: bool


def api_of(path: str) -> Api | None:
    """The API a request path calls, or None for paths that are not model calls (``/models``, files...)."""
    if path.endswith("/chat/completions"):
        return "chat"
    if path.endswith("/responses"):
        return "responses"
    return None


def read_request(api: Api, body: dict[str, Any]) -> WireRequest:
    """A request body as model, messages and params; the Responses API's ``instructions`` becomes a system
    message and a string ``input`` a user message, so the recorded call reads like a chat."""
    model = str(body.get("model", ""))
    stream = bool(body.get("stream"))
    if api == "chat":
        messages = list(body.get("messages") or [])
        skip = {"model", "messages", *_TRANSPORT_ONLY}
    else:
        given = body.get("input")
        messages = [{"role": "system", "content": body["instructions"]}] if body.get("instructions") else []
        messages += [{"role": "user", "content": given}] if isinstance(given, str) else list(given or [])
        skip = {"model", "input", "instructions", *_TRANSPORT_ONLY}
    params = {k: v for k, v in body.items() if k not in skip}
    return WireRequest(api, model, messages, params, stream)


def parse_answer(api: Api, body: str, content_type: str | None, stream: bool) -> Completion:
    """The answer's text, finish reason, usage and model; ``BadResponse`` when it is none of the known shapes."""
    if api == "chat":
        return parse_chat_stream(body) if stream else parse_completion(body, content_type)
    return parse_response_stream(body) if stream else parse_response(json_object(body, content_type))


def _sse(body: str) -> Iterator[dict[str, Any]]:
    """The JSON data of each server-sent event (``[DONE]`` and comments skipped)."""
    for line in body.splitlines():
        if line.startswith("data:") and (data := line[5:].strip()) and data != "[DONE]":
            try:
                event = json.loads(data)
            except (json.JSONDecodeError, RecursionError):  # RecursionError: nested too deep for the parser
                raise BadResponse(f"stream event is not JSON: {data[:200]!r}") from None
            if isinstance(event, dict):
                yield event


def parse_chat_stream(body: str) -> Completion:
    text, finish, usage, model, chunks = [], None, None, None, 0
    calls: dict[int, dict[str, str]] = {}
    for chunk in _sse(body):
        chunks += 1
        if "error" in chunk and "choices" not in chunk:
            raise BadResponse(f"error object in the stream: {json.dumps(chunk['error'])[:300]}")
        model = chunk.get("model") if isinstance(chunk.get("model"), str) else model
        usage = parse_usage(chunk.get("usage")) or usage
        for choice in chunk.get("choices") or []:
            if isinstance(choice, dict) and choice.get("index", 0) == 0:
                delta = choice.get("delta") or {}
                if isinstance(delta.get("content"), str):
                    text.append(delta["content"])
                for call in delta.get("tool_calls") or []:
                    _add_call_delta(calls, call)
                finish = choice.get("finish_reason") or finish
    if not chunks:
        raise BadResponse(f"no chunks in the stream: {body[:200]!r}")
    if calls and not text:
        text = [tool_calls_text([calls[i] for i in sorted(calls)])]
    return Completion("".join(text), finish, usage, model)


def _add_call_delta(calls: dict[int, dict[str, str]], call: Any) -> None:
    """One streamed piece of a tool call: its name comes once, its arguments in pieces."""
    if not isinstance(call, dict):
        return
    into = calls.setdefault(int(call.get("index") or 0), {"name": "", "arguments": ""})
    function = call.get("function") or {}
    into["name"] += function.get("name") or ""
    into["arguments"] += function.get("arguments") or ""


def parse_response(data: dict[str, Any]) -> Completion:
    """A Responses API object: the text of its ``output_text`` parts, in order."""
    if "error" in data and data.get("error") and "output" not in data:
        raise BadResponse(f"error object in a 2xx answer: {json.dumps(data['error'])[:300]}")
    output = data.get("output")
    if not isinstance(output, list):
        raise BadResponse(f"no output in the response: {json.dumps(data)[:200]}")
    parts = [
        part.get("text", "")
        for item in output
        if isinstance(item, dict) and item.get("type") == "message"
        for part in item.get("content") or []
        if isinstance(part, dict) and part.get("type") == "output_text"
    ]
    calls = [item for item in output if isinstance(item, dict) and item.get("type") == "function_call"]
    if calls and not parts:
        parts = [tool_calls_text(calls)]
    usage = data.get("usage")
    counts = (
        {"prompt_tokens": usage.get("input_tokens"), "completion_tokens": usage.get("output_tokens")}
        if isinstance(usage, dict)
        else None
    )
    model = data.get("model") if isinstance(data.get("model"), str) else None
    return Completion("".join(parts), data.get("status"), parse_usage(counts), model)


def parse_response_stream(body: str) -> Completion:
    deltas: list[str] = []
    for event in _sse(body):
        kind = event.get("type")
        if kind == "response.output_text.delta" and isinstance(event.get("delta"), str):
            deltas.append(event["delta"])
        elif kind in ("response.completed", "response.incomplete") and isinstance(event.get("response"), dict):
            return parse_response(event["response"])
        elif kind in ("response.failed", "error"):
            raise BadResponse(f"the stream failed: {json.dumps(event)[:300]}")
    if not deltas:
        raise BadResponse(f"no response events in the stream: {body[:200]!r}")
    return Completion("".join(deltas), None, None, None)


# -- rendering ------------------------------------------------------------------------------------------


def render_answer(api: Api, answer: Completion, model: str, stream: bool, serial: int) -> tuple[str, str]:
    """(content type, body) answering a request of ``api`` with ``answer``; ``serial`` makes the ids unique."""
    if api == "chat":
        return (
            ("text/event-stream", chat_stream(answer, model, serial))
            if stream
            else (
                "application/json",
                json.dumps(chat_completion(answer, model, serial)),
            )
        )
    response = response_object(answer, model, serial)
    if not stream:
        return "application/json", json.dumps(response)
    events = [
        {"type": "response.created", "sequence_number": 0, "response": {**response, "status": "in_progress"}},
        {
            "type": "response.output_text.delta",
            "sequence_number": 1,
            "item_id": f"msg_{serial}",
            "output_index": 0,
            "content_index": 0,
            "delta": answer.text,
        },
        {"type": "response.completed", "sequence_number": 2, "response": response},
    ]
    return "text/event-stream", "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def _usage(usage: LlmUsage | None) -> dict[str, int] | None:
    return usage.model_dump() if usage is not None else None


def chat_completion(answer: Completion, model: str, serial: int) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": f"chatcmpl-{serial}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": answer.model or model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": answer.text},
                "finish_reason": answer.finish_reason or "stop",
            }
        ],
    }
    if answer.usage is not None:
        body["usage"] = _usage(answer.usage)
    return body


def chat_stream(answer: Completion, model: str, serial: int) -> str:
    head = {
        "id": f"chatcmpl-{serial}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": answer.model or model,
    }
    chunks = [
        {
            **head,
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": answer.text}, "finish_reason": None}],
        },
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": answer.finish_reason or "stop"}]},
    ]
    if answer.usage is not None:
        chunks.append({**head, "choices": [], "usage": _usage(answer.usage)})
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


def response_object(answer: Completion, model: str, serial: int) -> dict[str, Any]:
    usage = answer.usage or LlmUsage()
    return {
        "id": f"resp_{serial}",
        "object": "response",
        "created_at": int(time.time()),
        "model": answer.model or model,
        "status": "completed",
        "output": [
            {
                "type": "message",
                "id": f"msg_{serial}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": answer.text, "annotations": []}],
            }
        ],
        "parallel_tool_calls": False,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": usage.prompt_tokens,
            "output_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }
