"""How the scripted server sends a reply, as an OpenAI-compatible provider would: a chat completion or a Responses
object (streamed or not), a tool call, an HTTP error, garbage, or any of them after a delay."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

from aiohttp import web

from p2w_runtime.llm import Api, Completion, parse_usage, render_answer, response_object
from p2w_runtime.testing._replies import (
    Delay,
    Garbage,
    HttpError,
    Reply,
    RequestJson,
    Text,
    ToolCall,
    Usage,
    message_text,
)

_ERROR_TYPES = {429: "rate_limit_exceeded", 400: "invalid_request_error", 401: "authentication_error"}


async def answer(reply: Reply, body: RequestJson, api: Api, ids: Iterator[int], model: str) -> web.StreamResponse:
    """``reply`` as the API sends it to a request of ``body``; ``ids`` numbers the answers, ``model`` names the
    model when the request names none."""
    if isinstance(reply, Delay):
        await asyncio.sleep(reply.seconds)
        return await answer(reply.then, body, api, ids, model)
    if isinstance(reply, HttpError):
        headers = {"Retry-After": f"{reply.retry_after:g}"} if reply.retry_after is not None else None
        return error(reply.status, reply.message, headers=headers)
    if isinstance(reply, Garbage):
        if isinstance(reply.body, dict):
            return web.json_response(reply.body, status=reply.status)
        return web.Response(text=reply.body, status=reply.status, content_type=reply.content_type)
    if isinstance(reply, Text) and (api == "responses" or body.get("stream")):
        chat = completion(reply, body, ids, model)
        done = Completion(reply.content, reply.finish_reason, parse_usage(chat.get("usage")), chat["model"])
        content_type, text = render_answer(api, done, chat["model"], bool(body.get("stream")), next(ids))
        return web.Response(text=text, content_type=content_type)
    if isinstance(reply, Text):
        return web.json_response(completion(reply, body, ids, model))
    if isinstance(reply, ToolCall):
        return _tool_call(reply, body, api, ids, model)
    raise TypeError(f"not a scripted reply: {reply!r}")


def completion(reply: Text, body: RequestJson, ids: Iterator[int], model: str) -> dict[str, Any]:
    """A chat completion of ``reply``'s text, with its usage (``auto``: estimated from the characters)."""
    out: dict[str, Any] = {
        "id": f"chatcmpl-scripted-{next(ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(body.get("model", model)),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.content},
                "finish_reason": reply.finish_reason,
            }
        ],
    }
    usage = reply.usage
    if usage == "auto":
        prompt_chars = sum(len(message_text(m)) for m in body["messages"] if isinstance(m, dict))
        usage = Usage(prompt_chars // 4 + 1, len(reply.content) // 4 + 1)
    if isinstance(usage, Usage):
        out["usage"] = {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.prompt_tokens + usage.completion_tokens,
        }
    return out


def _tool_call(reply: ToolCall, body: RequestJson, api: Api, ids: Iterator[int], model: str) -> web.Response:
    """A tool call in the shape asked for: a chat completion (streamed or not) or a Responses object."""
    serial = next(ids)
    model = str(body.get("model", model))
    call = {
        "id": f"call_{serial}",
        "type": "function",
        "function": {"name": reply.name, "arguments": reply.arguments},
    }
    if api == "responses":
        item = {
            "type": "function_call", "id": f"fc_{serial}", "call_id": f"call_{serial}", "name": reply.name,
            "arguments": reply.arguments, "status": "completed",
        }  # fmt: skip
        answer = response_object(Completion("", "completed", None, model), model, serial)
        answer["output"] = [item]
        if not body.get("stream"):
            return web.json_response(answer)
        done = {"type": "response.completed", "sequence_number": 0, "response": answer}
        return web.Response(
            text=f"event: {done['type']}\ndata: {json.dumps(done)}\n\n", content_type="text/event-stream"
        )
    chat = completion(Text(""), body, ids, model)
    chat["choices"][0] = {
        "index": 0, "message": {"role": "assistant", "content": None, "tool_calls": [call]},
        "finish_reason": "tool_calls",
    }  # fmt: skip
    if not body.get("stream"):
        return web.json_response(chat)
    head = {
        "id": chat["id"],
        "object": "chat.completion.chunk",
        "created": chat["created"],
        "model": model,
    }
    delta = {"role": "assistant", "content": None, "tool_calls": [{"index": 0, **call}]}
    chunks = [
        {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    text = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    return web.Response(text=text, content_type="text/event-stream")


def error(status: int, message: str, *, kind: str | None = None, headers: dict[str, str] | None = None) -> web.Response:
    error_type = kind or _ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    body = {"error": {"message": message, "type": error_type, "param": None, "code": error_type}}
    return web.json_response(body, status=status, headers=headers)
