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
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from aiohttp import web

from p2w_runtime.llm import read_request
from p2w_runtime.testing._replies import (
    Reply,
    ReplySpec,
    RequestJson,
    Rule,
    message_text,
    resolve,
)
from p2w_runtime.testing._scripted_answers import answer, error


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
            return error(400, "request body must be a JSON object with a 'messages' list")
        reply = self._choose(received.body)
        if reply is None:
            last = next((message_text(m) for m in reversed(received.body["messages"]) if isinstance(m, dict)), "")
            return error(
                400,
                f"scripted server: no reply scripted for this request (last message: {last[:200]!r})",
                kind="script_exhausted",
            )
        return await answer(reply, received.body, "chat", self._ids, self.models[0])

    async def _responses(self, request: web.Request) -> web.StreamResponse:
        """``POST /v1/responses``: scripted like a chat whose messages are the instructions and the input."""
        received = await self._record(request)
        if not isinstance(received.body, dict) or "input" not in received.body:
            return error(400, "request body must be a JSON object with an 'input'")
        body = {**received.body, "messages": read_request("responses", received.body).messages}
        reply = self._choose(body)
        if reply is None:
            return error(400, "scripted server: no reply scripted for this request", kind="script_exhausted")
        return await answer(reply, body, "responses", self._ids, self.models[0])

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
