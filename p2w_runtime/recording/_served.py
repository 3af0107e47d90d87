"""Serving an agent's model calls back from its recording: an OpenAI client that never leaves the process.

Requests are keyed as they were recorded (``fingerprint`` of model, messages and params, and the ordinal among
this episode's calls with that fingerprint), the rule ``rerun`` answers the own agent by
(``p2w_runtime.rerun``'s ``RecordedLlm``), and answered in the format asked for now: a chat completion or a
Responses object, streamed or not. A request the recording does not hold is refused with a 400 naming its
fingerprint, which the SDK raises at once as ``openai.BadRequestError``: the agent diverged from its recording.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import overload

import httpx2
import openai

from p2w_rt.schemas import LlmCall
from p2w_runtime.domain import counted, episodes_of, find_run
from p2w_runtime.errors import UserError
from p2w_runtime.llm import api_of, completion_of, fingerprint, read_request, render_answer
from p2w_runtime.store import EventStore

_NOWHERE = "http://recorded.invalid/v1"
"""Never contacted: the transport answers every request."""


@dataclass
class RecordedCalls:
    """An episode's ``llm.call`` events by (fingerprint, ordinal), every attempt in order."""

    stream: str
    attempts: dict[tuple[str, int], list[LlmCall]] = field(default_factory=dict)

    @classmethod
    async def of_stream(cls, store: EventStore, stream: str) -> RecordedCalls:
        calls = cls(stream)
        async for stored in store.read_stream(stream):
            payload = stored.decode_payload()
            if isinstance(payload, LlmCall):
                calls.attempts.setdefault((payload.fingerprint, payload.ordinal), []).append(payload)
        return calls

    @classmethod
    async def of_task(cls, store: EventStore, run: str, task_id: str) -> RecordedCalls:
        """The calls of ``task_id``'s counted episode in run ``run`` (id or label)."""
        info = await find_run(store, run)
        refs = [ref for ref in counted(await episodes_of(store, info.run_id)) if ref.task_id == task_id]
        if not refs:
            raise UserError(f"run {info.label!r} has no counted episode of task {task_id!r}")
        return await cls.of_stream(store, refs[-1].stream)


class _Answers:
    def __init__(self, calls: RecordedCalls) -> None:
        self.calls = calls
        self.seen: Counter[str] = Counter()
        self.serial = itertools.count(1)

    def answer(self, request: httpx2.Request, body: bytes) -> httpx2.Response:
        api = api_of(request.url.path)
        if api is None or request.method != "POST":
            return _refuse(404, f"a recording answers model calls only, not {request.method} {request.url.path}")
        wire = read_request(api, json.loads(body))
        key = fingerprint(wire.model, wire.messages, wire.params)
        ordinal = self.seen[key]
        self.seen[key] += 1
        attempts = self.calls.attempts.get((key, ordinal))
        if not attempts:
            return _refuse(400, f"{self.calls.stream}: no recorded call has fingerprint {key[:12]} (ordinal {ordinal})")
        answered = next((a for a in attempts if a.error is None and a.response is not None), None)
        if answered is None:  # every recorded attempt failed: fail the same way, without a retry
            return _refuse(400, f"the recorded call failed: {attempts[-1].error or 'no answer recorded'}")
        content_type, text = render_answer(api, completion_of(answered), wire.model, wire.stream, next(self.serial))
        return httpx2.Response(200, headers={"content-type": content_type}, text=text)


class ServedTransport(httpx2.BaseTransport):
    def __init__(self, calls: RecordedCalls) -> None:
        self.answers = _Answers(calls)

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        return self.answers.answer(request, request.read())


class AsyncServedTransport(httpx2.AsyncBaseTransport):
    def __init__(self, calls: RecordedCalls) -> None:
        self.answers = _Answers(calls)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        return self.answers.answer(request, await request.aread())


@overload
def served(client: openai.OpenAI, calls: RecordedCalls) -> openai.OpenAI: ...
@overload
def served(client: openai.AsyncOpenAI, calls: RecordedCalls) -> openai.AsyncOpenAI: ...
def served(client: openai.OpenAI | openai.AsyncOpenAI, calls: RecordedCalls) -> openai.OpenAI | openai.AsyncOpenAI:
    """A copy of ``client`` answered from ``calls`` only (no retries: a divergence is reported at once)."""
    if isinstance(client, openai.AsyncOpenAI):
        http = httpx2.AsyncClient(transport=AsyncServedTransport(calls))
        return client.copy(base_url=_NOWHERE, http_client=http, max_retries=0)
    return client.copy(base_url=_NOWHERE, http_client=httpx2.Client(transport=ServedTransport(calls)), max_retries=0)


def _refuse(status: int, message: str) -> httpx2.Response:
    body = {"error": {"message": message, "type": "invalid_request_error", "code": "not_recorded"}}
    return httpx2.Response(status, json=body)
