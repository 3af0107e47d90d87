"""The recording proxy: an OpenAI-compatible endpoint on 127.0.0.1 that forwards to the real one and records.

An agent started by ``record --exec`` gets ``OPENAI_BASE_URL=http://127.0.0.1:PORT/e/TOKEN/v1``: the token names
its episode, so one server serves every episode of a run at once. Each request is forwarded to the real endpoint
(``--base-url``) with the real key, which the agent never sees, through the recording API's transport
(``AsyncRecordingTransport``): chat completions and the Responses API, streamed or not, keyed and redacted as an
instrumented client's calls are. Other paths (``/models``) are forwarded unrecorded. Every answer must come whole
within ``--llm-timeout`` and in at most 16 MiB (``LimitedTransport``, the limits of p2w-rt's own client): a failure
is recorded as a failed attempt and answered to the agent as an HTTP error (504 past the deadline, else 502), so an
endpoint that trickles or floods cannot hang an episode or fill memory. A streamed answer (``text/event-stream``) is
passed on event by event as it arrives, a failure midway as a last event ``{"error": ...}``, which the ``openai``
SDKs raise; any other is read whole before it is passed on, so that its failure is still an HTTP error.

``POST /e/TOKEN/v1/traces`` receives the agent's OpenTelemetry spans (OTLP/HTTP, the path an exporter appends to
``OTEL_EXPORTER_OTLP_ENDPOINT``), handed to the episode's ``on_spans``.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import httpx2
from aiohttp import web

from p2w_runtime.exec._local_server import MAX_BODY, serve_locally
from p2w_runtime.llm import BadResponse, LimitedTransport, PriceTable
from p2w_runtime.recording import AsyncRecordingTransport, CallRecorder, EpisodeRecorder
from p2w_runtime.redaction import add_secret, add_url_credentials, redact_text

_NOT_FORWARDED = frozenset(
    {"host", "authorization", "content-length", "accept-encoding", "connection", "transfer-encoding", "keep-alive"}
)
"""The agent's headers the proxy sets itself (the key, the length) or that belong to one hop; ``accept-encoding`` is
dropped so the upstream answers uncompressed and the relayed bytes need no re-encoding."""
_NOT_RELAYED = frozenset({"content-length", "transfer-encoding", "connection", "keep-alive", "content-encoding"})
_UPSTREAM_FAILED = (httpx2.HTTPError, BadResponse)
"""What the upstream's answer can fail with: unreachable, too late (``httpx2.ReadTimeout``), too large."""


@dataclass
class ProxiedEpisode:
    """What the proxy needs of one episode: where its calls go, and what to do before each call and with spans."""

    recorder: EpisodeRecorder
    before_call: Callable[[], Awaitable[None]]
    """Called before each model call is recorded (the observer records the page the agent decides on)."""
    on_spans: Callable[[bytes, str], Awaitable[int]]
    """OTLP/HTTP body and its content type -> how many spans were taken."""
    after_call: Callable[[], Awaitable[None]]
    """Called once a model call is recorded, answered or failed (the observer stores it)."""


class RecordProxy:
    """One server for a run; ``register`` an episode to get its base URL, ``unregister`` it when it ends."""

    def __init__(self, upstream: str, api_key: str | None, *, timeout_s: float, prices: PriceTable | None) -> None:
        self.upstream = upstream.rstrip("/")
        self._key = api_key
        add_secret(api_key)
        add_url_credentials(upstream)
        self._timeout = timeout_s
        self._prices = prices
        self._episodes: dict[str, tuple[ProxiedEpisode, httpx2.AsyncClient]] = {}
        self._plain = httpx2.AsyncClient(transport=self._limited(), timeout=timeout_s)
        self._runner: web.AppRunner | None = None
        self.port = 0

    async def __aenter__(self) -> RecordProxy:
        app = web.Application(client_max_size=MAX_BODY)
        app.router.add_post("/e/{token}/v1/traces", self._traces)
        app.router.add_route("*", "/e/{token}/v1/{tail:.*}", self._forward)
        self._runner, self.port = await serve_locally(app)
        return self

    async def __aexit__(self, *_: object) -> None:
        for _episode, client in self._episodes.values():
            await client.aclose()
        self._episodes.clear()
        await self._plain.aclose()
        if self._runner is not None:
            await self._runner.cleanup()

    def register(self, episode: ProxiedEpisode) -> str:
        """A fresh token for ``episode``; its base URL is ``base_url(token)``. The token is also the agent's key."""
        token = f"p2w-{secrets.token_hex(16)}"
        add_secret(token)
        transport = AsyncRecordingTransport(self._limited(), CallRecorder("planner", episode.recorder, self._prices))
        self._episodes[token] = (episode, httpx2.AsyncClient(transport=transport, timeout=self._timeout))
        return token

    async def unregister(self, token: str) -> None:
        found = self._episodes.pop(token, None)
        if found is not None:
            await found[1].aclose()

    def _limited(self) -> LimitedTransport:
        return LimitedTransport(httpx2.AsyncHTTPTransport(), timeout_s=self._timeout)

    def base_url(self, token: str) -> str:
        return f"http://127.0.0.1:{self.port}/e/{token}/v1"

    def otlp_endpoint(self, token: str) -> str:
        return f"http://127.0.0.1:{self.port}/e/{token}"

    def _episode(self, request: web.Request) -> tuple[ProxiedEpisode, httpx2.AsyncClient]:
        found = self._episodes.get(request.match_info["token"])
        if found is None:
            raise web.HTTPNotFound(text="no episode is recorded at this address (it has ended, or never began)")
        return found

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        episode, client = self._episode(request)
        body = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _NOT_FORWARDED}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        url = f"{self.upstream}/{request.match_info['tail']}"
        if request.query_string:
            url += f"?{request.query_string}"
        model_call = request.method == "POST" and request.match_info["tail"].endswith(("chat/completions", "responses"))
        sender = client if model_call else self._plain
        outgoing = sender.build_request(request.method, url, headers=headers, content=body)
        if not model_call:
            return await self._relay(request, sender, outgoing)
        await episode.before_call()
        try:
            return await self._relay(request, sender, outgoing)
        finally:
            await episode.after_call()

    async def _relay(
        self, request: web.Request, sender: httpx2.AsyncClient, outgoing: httpx2.Request
    ) -> web.StreamResponse:
        """Send ``outgoing`` upstream and pass its answer on to the agent; a model call is recorded by the time this
        returns (its answer read whole, its stream ended, or its failure met)."""
        try:
            upstream = await sender.send(outgoing, stream=True)
        except _UPSTREAM_FAILED as exc:
            return self._failed(exc)
        try:
            relayed = {k: v for k, v in upstream.headers.items() if k.lower() not in _NOT_RELAYED}
            if not upstream.headers.get("content-type", "").startswith("text/event-stream"):
                try:
                    whole = await upstream.aread()
                except _UPSTREAM_FAILED as exc:
                    return self._failed(exc)
                return web.Response(status=upstream.status_code, headers=relayed, body=whole)
            response = web.StreamResponse(status=upstream.status_code, headers=relayed)
            await response.prepare(request)
            await _relay_events(upstream, response, self._error)
            return response
        finally:
            await upstream.aclose()

    def _error(self, exc: Exception) -> dict[str, object]:
        said = redact_text(f"{self.upstream} failed through the recording proxy: {type(exc).__name__}: {exc}")
        return {"error": {"message": said, "type": "proxy_error"}}

    def _failed(self, exc: Exception) -> web.Response:
        return web.json_response(self._error(exc), status=504 if isinstance(exc, httpx2.TimeoutException) else 502)

    async def _traces(self, request: web.Request) -> web.Response:
        episode, _client = self._episode(request)
        try:
            taken = await episode.on_spans(await request.read(), request.content_type)
        except ValueError as exc:
            return web.json_response({"error": redact_text(str(exc))}, status=400)
        return web.json_response({"partialSuccess": {}} if taken >= 0 else {})


async def _relay_events(
    upstream: httpx2.Response, response: web.StreamResponse, error: Callable[[Exception], dict[str, object]]
) -> None:
    """Pass a streamed answer on whole events at a time (up to a blank line), so that a failure midway ends it with
    one more event, ``data: {"error": ...}``, and not inside a half one. Only what came since the last look is
    searched (held bytes end in no blank line), so an event that floods costs its size, not its size squared.
    An agent that left (closed its stream, or was killed) ends the relay quietly at the next write: the answer is
    recorded as far as it came when the upstream is closed."""
    held = bytearray()
    try:
        try:
            async for chunk in upstream.aiter_bytes():
                start = max(0, len(held) - 3)  # a blank line may begin in the held bytes' last three
                held += chunk
                cut = max(
                    (at + len(blank) for blank in (b"\n\n", b"\r\n\r\n") if (at := held.rfind(blank, start)) >= 0),
                    default=0,
                )
                if cut:
                    await response.write(bytes(held[:cut]))
                    del held[:cut]
        except _UPSTREAM_FAILED as exc:
            await response.write(b"data: " + json.dumps(error(exc)).encode() + b"\n\n")
        else:
            await response.write(bytes(held))
        await response.write_eof()
    except ConnectionResetError:  # aiohttp's ClientConnectionResetError: the agent's end of the stream is closed
        return
