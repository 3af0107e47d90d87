"""The OpenAI wire formats beyond one chat completion: streamed chat chunks and the Responses API.

Parsed into the one ``Completion`` the recording keeps (text, finish reason, usage, model), and rendered back
from it, so a recorded call can answer a request in whichever format it was asked in (``p2w_runtime.recording``),
and the scripted server can speak them (``p2w_runtime.testing``). A request's identity (model, messages,
params) is read here too, so that a streamed call and a Responses call are fingerprinted like a chat completion.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from p2w_runtime.llm._request import (
    BadResponse,
    Choice,
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
    """Streamed chunks joined, each choice by its ``index`` (``n`` > 1 interleaves them)."""
    usage, model, chunks = None, None, 0
    choices: dict[int, _StreamedChoice] = {}
    for chunk in _sse(body):
        chunks += 1
        if "error" in chunk and "choices" not in chunk:
            raise BadResponse(f"error object in the stream: {json.dumps(chunk['error'])[:300]}")
        model = chunk.get("model") if isinstance(chunk.get("model"), str) else model
        usage = parse_usage(chunk.get("usage")) or usage
        for choice in chunk.get("choices") or []:
            if isinstance(choice, dict) and isinstance(index := choice.get("index", 0), int):
                choices.setdefault(index, _StreamedChoice()).add(choice)
    if not chunks:
        raise BadResponse(f"no chunks in the stream: {body[:200]!r}")
    read = [choices[i].choice() for i in sorted(choices)] or [Choice("", None)]
    return Completion(read[0].text, read[0].finish_reason, usage, model, tuple(read) if len(read) > 1 else ())


@dataclass
class _StreamedChoice:
    """One choice of a streamed answer as its pieces come: text, tool calls by index, finish reason."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, dict[str, str]] = field(default_factory=dict)
    finish: str | None = None

    def add(self, choice: dict[str, Any]) -> None:
        delta = choice.get("delta") or {}
        if isinstance(delta.get("content"), str):
            self.text.append(delta["content"])
        for call in delta.get("tool_calls") or []:
            _add_call_delta(self.calls, call)
        finish = choice.get("finish_reason")
        self.finish = finish if isinstance(finish, str) else self.finish

    def choice(self) -> Choice:
        if self.calls and not self.text:
            return Choice(tool_calls_text([self.calls[i] for i in sorted(self.calls)]), self.finish)
        return Choice("".join(self.text), self.finish)


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
    messages = [
        Choice(
            "".join(
                part.get("text", "")
                for part in item.get("content") or []
                if isinstance(part, dict) and part.get("type") == "output_text"
            ),
            item.get("status") if isinstance(item.get("status"), str) else None,
        )
        for item in output
        if isinstance(item, dict) and item.get("type") == "message"
    ]
    parts = [m.text for m in messages]
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
    status = data.get("status") if isinstance(data.get("status"), str) else None
    return Completion("".join(parts), status, parse_usage(counts), model, tuple(messages) if len(messages) > 1 else ())


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
