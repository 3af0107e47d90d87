"""A ``Completion`` rendered as the wire format a request asked for: a chat completion or a Responses object,
streamed or not, with every choice the answer had. The replay endpoint, the recording API's ``served`` and the
scripted server answer through here, so a recorded answer comes back as it was given, whatever format it was
asked in now.
"""

from __future__ import annotations

import json
import time
from typing import Any

from p2w_rt.schemas import LlmUsage
from p2w_runtime.llm._request import Choice, Completion
from p2w_runtime.llm._wire import Api


def render_answer(api: Api, answer: Completion, model: str, stream: bool, serial: int) -> tuple[str, str]:
    """(content type, body) answering a request of ``api`` with ``answer``; ``serial`` makes the ids unique."""
    if api == "chat":
        if stream:
            return "text/event-stream", chat_stream(answer, model, serial)
        return "application/json", json.dumps(chat_completion(answer, model, serial))
    response = response_object(answer, model, serial)
    if not stream:
        return "application/json", json.dumps(response)
    deltas = [
        {
            "type": "response.output_text.delta",
            "item_id": item["id"],
            "output_index": index,
            "content_index": 0,
            "delta": item["content"][0]["text"],
        }
        for index, item in enumerate(response["output"])
    ]
    events = [
        {"type": "response.created", "response": {**response, "status": "in_progress"}},
        *deltas,
        {"type": "response.completed", "response": response},
    ]
    return "text/event-stream", "".join(
        f"event: {e['type']}\ndata: {json.dumps({**e, 'sequence_number': n})}\n\n" for n, e in enumerate(events)
    )


def choices_of(answer: Completion) -> tuple[Choice, ...]:
    """Every choice of ``answer``: its several, or its one."""
    return answer.choices or (Choice(answer.text, answer.finish_reason),)


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
                "index": index,
                "message": {"role": "assistant", "content": choice.text},
                "finish_reason": choice.finish_reason or "stop",
            }
            for index, choice in enumerate(choices_of(answer))
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
    chunks = []
    for index, choice in enumerate(choices_of(answer)):
        said = {"role": "assistant", "content": choice.text}
        chunks.append({**head, "choices": [{"index": index, "delta": said, "finish_reason": None}]})
        ended = {"index": index, "delta": {}, "finish_reason": choice.finish_reason or "stop"}
        chunks.append({**head, "choices": [ended]})
    if answer.usage is not None:
        chunks.append({**head, "choices": [], "usage": _usage(answer.usage)})
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


def response_object(answer: Completion, model: str, serial: int) -> dict[str, Any]:
    """A Responses API object: one message per choice (the first's id ``msg_SERIAL``)."""
    usage = answer.usage or LlmUsage()
    messages = [
        {
            "type": "message",
            "id": f"msg_{serial}" if index == 0 else f"msg_{serial}_{index}",
            "status": "incomplete" if choice.finish_reason in ("incomplete", "length") else "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": choice.text, "annotations": []}],
        }
        for index, choice in enumerate(choices_of(answer))
    ]
    return {
        "id": f"resp_{serial}",
        "object": "response",
        "created_at": int(time.time()),
        "model": answer.model or model,
        "status": "completed",
        "output": messages,
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
