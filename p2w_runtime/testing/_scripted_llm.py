"""A local OpenAI-compatible server that answers from a script: the project's only test double.

It is real HTTP on 127.0.0.1, so the production client, its timeouts and its
retries are exercised exactly as against a provider. Host it on the caller's
event loop (``async with``) or on its own thread (``with``) for sync code such
as click's CliRunner or a subprocess.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from p2w_runtime.llm import Api, Completion, parse_usage, read_request, render_answer, response_object
from p2w_runtime.testing._replies import (
    Delay,
    Garbage,
    HttpError,
    Reply,
    ReplySpec,
    RequestJson,
    Rule,
    Text,
    ToolCall,
    Usage,
    message_text,
    resolve,
)

_ERROR_TYPES = {429: "rate_limit_exceeded", 400: "invalid_request_error", 401: "authentication_error"}


@dataclass(frozen=True, slots=True)
class ReceivedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: RequestJson | None
    raw: str


class ScriptedLlm:
    """Answers ``POST /v1/chat/completions`` from, in order: the reply queue, the rules, the handler.

    A request nothing answers gets a 400 naming it (not retried by the client), so a
    missing script line fails the test at once with a readable message.
    """

    def __init__(
        self,
        *,
        models: tuple[str, ...] = ("scripted-model",),
        handler_cancellation: bool = True,
        host: str = "127.0.0.1",
        port: int = 0,
        keep_requests: bool = True,
    ) -> None:
        """``port`` 0 picks a free one; ``keep_requests=False`` (a long-lived server, ``demo-model serve``) keeps
        no request bodies in memory."""
        self.models = models
        self._host, self._bind_port, self._keep_requests = host, port, keep_requests
        self._handler_cancellation = handler_cancellation
        self._lock = threading.Lock()
        self._queue: deque[ReplySpec] = deque()
        self._rules: list[Rule] = []
        self._handler: Callable[[RequestJson], Reply | str] | None = None
        self._requests: list[ReceivedRequest] = []
        self._unanswered = 0
        self._ids = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self._port: int | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- scripting -------------------------------------------------------------

    def script(self, *replies: ReplySpec) -> ScriptedLlm:
        """Queue replies answered in order, before any rule."""
        with self._lock:
            self._queue.extend(replies)
        return self

    def rule(self, when: str | Callable[[RequestJson], bool], reply: ReplySpec, *, times: int | None = None) -> Rule:
        rule = Rule(when, reply, times)
        with self._lock:
            self._rules.append(rule)
        return rule

    def handle_with(self, handler: Callable[[RequestJson], Reply | str] | None) -> ScriptedLlm:
        """Answer whatever the queue and rules leave with ``handler(request_json)``."""
        with self._lock:
            self._handler = handler
        return self

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self._rules.clear()
            self._handler = None
            self._requests.clear()
            self._unanswered = 0

    # -- inspection ------------------------------------------------------------

    @property
    def requests(self) -> list[ReceivedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[RequestJson]:
        """Bodies of the chat completion requests received, in arrival order."""
        return [r.body or {} for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def unanswered(self) -> int:
        """Requests that found no script line (each got a 400)."""
        with self._lock:
            return self._unanswered

    @property
    def pending(self) -> int:
        """Queued replies not consumed yet."""
        with self._lock:
            return len(self._queue)

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("scripted LLM server is not running")
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://{self._host}:{self.port}/v1"

    # -- serving ---------------------------------------------------------------

    def _choose(self, request: RequestJson) -> Reply | None:
        with self._lock:
            spec: ReplySpec | None = None
            if self._queue:
                spec = self._queue.popleft()
            else:
                rule = next((r for r in self._rules if r.matches(request)), None)
                if rule is not None:
                    rule.fired += 1
                    spec = rule.reply
                elif self._handler is not None:
                    spec = self._handler
            if spec is None:
                self._unanswered += 1
                return None
        return resolve(spec, request)

    async def _record(self, request: web.Request) -> ReceivedRequest:
        raw = await request.text()
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = None
        received = ReceivedRequest(request.method, request.path, dict(request.headers), body, raw)
        if self._keep_requests:
            with self._lock:
                self._requests.append(received)
        return received

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        received = await self._record(request)
        if not isinstance(received.body, dict) or not isinstance(received.body.get("messages"), list):
            return _error(400, "request body must be a JSON object with a 'messages' list")
        reply = self._choose(received.body)
        if reply is None:
            last = next((message_text(m) for m in reversed(received.body["messages"]) if isinstance(m, dict)), "")
            return _error(
                400,
                f"scripted server: no reply scripted for this request (last message: {last[:200]!r})",
                kind="script_exhausted",
            )
        return await self._answer(reply, received.body)

    async def _responses(self, request: web.Request) -> web.StreamResponse:
        """``POST /v1/responses``: scripted like a chat whose messages are the instructions and the input."""
        received = await self._record(request)
        if not isinstance(received.body, dict) or "input" not in received.body:
            return _error(400, "request body must be a JSON object with an 'input'")
        body = {**received.body, "messages": read_request("responses", received.body).messages}
        reply = self._choose(body)
        if reply is None:
            return _error(400, "scripted server: no reply scripted for this request", kind="script_exhausted")
        return await self._answer(reply, body, "responses")

    async def _answer(self, reply: Reply, body: RequestJson, api: Api = "chat") -> web.StreamResponse:
        if isinstance(reply, Delay):
            await asyncio.sleep(reply.seconds)
            return await self._answer(reply.then, body, api)
        if isinstance(reply, HttpError):
            headers = {"Retry-After": f"{reply.retry_after:g}"} if reply.retry_after is not None else None
            return _error(reply.status, reply.message, headers=headers)
        if isinstance(reply, Garbage):
            if isinstance(reply.body, dict):
                return web.json_response(reply.body, status=reply.status)
            return web.Response(text=reply.body, status=reply.status, content_type=reply.content_type)
        if isinstance(reply, Text) and (api == "responses" or body.get("stream")):
            chat = self._completion(reply, body)
            answer = Completion(reply.content, reply.finish_reason, parse_usage(chat.get("usage")), chat["model"])
            content_type, text = render_answer(api, answer, chat["model"], bool(body.get("stream")), next(self._ids))
            return web.Response(text=text, content_type=content_type)
        if isinstance(reply, Text):
            return web.json_response(self._completion(reply, body))
        if isinstance(reply, ToolCall):
            return self._tool_call(reply, body, api)
        raise TypeError(f"not a scripted reply: {reply!r}")

    def _completion(self, reply: Text, body: RequestJson) -> dict[str, Any]:
        completion: dict[str, Any] = {
            "id": f"chatcmpl-scripted-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(body.get("model", self.models[0])),
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
            completion["usage"] = {
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
                "total_tokens": usage.prompt_tokens + usage.completion_tokens,
            }
        return completion

    def _tool_call(self, reply: ToolCall, body: RequestJson, api: Api) -> web.Response:
        """A tool call in the shape asked for: a chat completion (streamed or not) or a Responses object."""
        serial = next(self._ids)
        model = str(body.get("model", self.models[0]))
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
        completion = self._completion(Text(""), body)
        completion["choices"][0] = {
            "index": 0, "message": {"role": "assistant", "content": None, "tool_calls": [call]},
            "finish_reason": "tool_calls",
        }  # fmt: skip
        if not body.get("stream"):
            return web.json_response(completion)
        head = {
            "id": completion["id"],
            "object": "chat.completion.chunk",
            "created": completion["created"],
            "model": model,
        }
        delta = {"role": "assistant", "content": None, "tool_calls": [{"index": 0, **call}]}
        chunks = [
            {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        ]
        text = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        return web.Response(text=text, content_type="text/event-stream")

    async def _models(self, request: web.Request) -> web.StreamResponse:
        await self._record(request)
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "p2w-rt"} for m in self.models]
        return web.json_response({"object": "list", "data": data})

    # -- lifecycle on the caller's loop ------------------------------------------

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/responses", self._responses)
        app.router.add_get("/v1/models", self._models)
        runner = web.AppRunner(
            app, access_log=None, shutdown_timeout=0.5, handler_cancellation=self._handler_cancellation
        )
        await runner.setup()
        site = web.TCPSite(runner, self._host, self._bind_port)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        self._port = runner.addresses[0][1]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
            self._port = None

    async def __aenter__(self) -> ScriptedLlm:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- lifecycle on a thread of its own -------------------------------------------

    def start_in_thread(self) -> None:
        """Serve from a daemon thread with its own loop, so sync callers and other loops can use it."""
        loop = asyncio.new_event_loop()
        started = threading.Event()
        failure: list[BaseException] = []

        def serve() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self.start())
            except BaseException as exc:  # reported to the starting thread below
                failure.append(exc)
                started.set()
                loop.close()
                return
            started.set()
            loop.run_forever()
            loop.run_until_complete(self.stop())
            loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=serve, name="scripted-llm", daemon=True)
        self._thread.start()
        started.wait()
        if failure:
            raise failure[0]

    def stop_thread(self) -> None:
        if self._loop is None or self._thread is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop = None
        self._thread = None

    def __enter__(self) -> ScriptedLlm:
        self.start_in_thread()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop_thread()


def _error(
    status: int, message: str, *, kind: str | None = None, headers: dict[str, str] | None = None
) -> web.Response:
    error_type = kind or _ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    body = {"error": {"message": message, "type": error_type, "param": None, "code": error_type}}
    return web.json_response(body, status=status, headers=headers)
