"""HTTP transports under an OpenAI client that append each model call to the current episode as an ``llm.call``.

Below the SDK, so whatever the agent calls (chat completions or the Responses API, sync or async, streamed or
not) is seen as the bytes that crossed the wire: the body is passed on chunk by chunk as it arrives and recorded
when it ends. The call is keyed like p2w-rt's own client keys it (``fingerprint`` of model, messages and params;
``ordinal`` per episode), so the rerun mechanism can answer it again. Headers are never recorded, so the API key is
not either; it is also registered for redaction, in case an endpoint echoes it in an error.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass

import httpx2

from p2w_rt.schemas import LlmCall, LlmRole
from p2w_runtime.domain import EpisodeGrammarError
from p2w_runtime.llm import (
    BadResponse,
    Completion,
    PriceTable,
    WireRequest,
    api_of,
    fingerprint,
    parse_answer,
    read_request,
)
from p2w_runtime.recording._episode import EpisodeRecorder, current_episode
from p2w_runtime.redaction import redact, redact_text

ROLE_HEADER = "x-p2w-role"
"""Per-call role (``extra_headers={"x-p2w-role": "generator"}``); removed before the request leaves."""
_RETRY_HEADER = "x-stainless-retry-count"
"""The openai SDK's own retry counter: a retry is another attempt of the same call, not a new call."""
_ROLES: frozenset[str] = frozenset({"planner", "generator", "judge", "classifier"})
_CLOSED = {
    "capturing": "only page captures, final_state and episode.finished follow a page capture",
    "closing": "only episode.finished may follow final_state",
    "finished": "the episode has finished",
}
"""Grammar phases in which no ``llm.call`` may be written: such a call is refused before it is sent."""


class Refused(Exception):
    """A model call the episode grammar refuses: answered with a 400 carrying the grammar's error, which the SDK
    raises at once (``openai.BadRequestError``) instead of retrying an exception raised in its transport."""

    def __init__(self, error: EpisodeGrammarError) -> None:
        super().__init__(str(error))
        self.error = error

    def response(self) -> httpx2.Response:
        body = {"error": {"message": str(self.error), "type": "invalid_request_error", "code": "episode_grammar"}}
        return httpx2.Response(400, json=body)


@dataclass
class _Pending:
    episode: EpisodeRecorder
    request: WireRequest
    role: LlmRole
    key: str
    ordinal: int
    attempt: int
    step: int
    started: float


_Done = Callable[[bytes, Exception | None], None]
"""Takes a body as it passed, and the error that stopped it before its end (a timeout, a size limit), if any."""
_Tee = Callable[[object, _Done], httpx2.SyncByteStream | httpx2.AsyncByteStream]
"""Wraps a response body: passes it on, and hands the whole of it to the callback once it has passed."""


class CallRecorder:
    """What both transports share: which requests are model calls, and the ``llm.call`` each one becomes."""

    def __init__(self, role: LlmRole, episode: EpisodeRecorder | None, prices: PriceTable | None) -> None:
        self.role = role
        self.episode = episode
        self.prices = prices if prices is not None else PriceTable.default()

    def begin(self, request: httpx2.Request, body: bytes) -> _Pending | None:
        """The pending call of ``request``, or None when it is no model call or no episode is open."""
        role = request.headers.pop(ROLE_HEADER, None)
        api = api_of(request.url.path)
        episode = self.episode or current_episode.get()
        if api is None or request.method != "POST" or episode is None or episode.finished is not None:
            return None
        try:
            data = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None
        if not isinstance(data, dict):
            return None
        if (phase := episode.writer.grammar.phase) in _CLOSED:
            raise Refused(EpisodeGrammarError(episode.stream, "llm.call", _CLOSED[phase]))
        wire = read_request(api, data)
        key = fingerprint(wire.model, wire.messages, wire.params)
        attempt = _retries(request) + 1
        chosen: LlmRole = role if role in _ROLES else self.role  # type: ignore[assignment]
        return _Pending(
            episode,
            wire,
            chosen,
            key,
            episode.ordinal(key, attempt),
            attempt,
            episode.llm_step(chosen),
            time.perf_counter(),
        )

    def finish(self, pending: _Pending, response: httpx2.Response | None, raw: bytes, error: str | None) -> None:
        """Record the call: its answer parsed from ``raw`` (the whole body), or the error it met."""
        answer: Completion | None = None
        if error is None and response is not None:
            text = _decoded(response, raw)
            if response.status_code >= 400:
                error = f"HTTP {response.status_code}: {text[:500]}"
            else:
                try:
                    answer = parse_answer(
                        pending.request.api, text, response.headers.get("content-type"), pending.request.stream
                    )
                except BadResponse as exc:
                    error = str(exc)
        wire = pending.request
        cost = self.prices.cost(wire.model, answer.usage) if answer is not None else None
        choices = answer.choices if answer is not None else ()
        call = LlmCall.model_validate(
            redact(
                {
                    "role": pending.role,
                    "model": wire.model,
                    "step": pending.step,
                    "messages": wire.messages,
                    "params": wire.params,
                    "response": answer.text if answer else None,
                    "choices": [{"text": c.text, "finish_reason": c.finish_reason} for c in choices] or None,
                    "finish_reason": answer.finish_reason if answer else None,
                    "usage": answer.usage.model_dump() if answer and answer.usage else None,
                    "latency_s": time.perf_counter() - pending.started,
                    "fingerprint": pending.key,
                    "ordinal": pending.ordinal,
                    "attempt": pending.attempt,
                    "error": redact_text(error) if error else None,
                    "cost_usd": cost,
                }
            )
        )
        pending.episode.record_call(call)

    def relay(self, pending: _Pending, response: httpx2.Response, tee: _Tee) -> httpx2.Response:
        """``response`` as the client gets it: its body passed on through ``tee``, which records the call at its end."""

        def done(raw: bytes, stopped: Exception | None) -> None:
            self.finish(pending, response, raw, None if stopped is None else _failure(stopped))

        stream = tee(response.stream, done)
        return httpx2.Response(
            response.status_code, headers=response.headers, stream=stream, extensions=response.extensions
        )

    def failed(self, pending: _Pending, exc: Exception) -> None:
        """Record the call as having met ``exc`` before any answer came."""
        self.finish(pending, None, b"", _failure(exc))


class RecordingTransport(httpx2.BaseTransport):
    """The sync transport (``openai.OpenAI``)."""

    def __init__(self, inner: httpx2.BaseTransport, calls: CallRecorder) -> None:
        self.inner = inner
        self.calls = calls

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            pending = self.calls.begin(request, request.read())
        except Refused as refused:
            return refused.response()
        if pending is None:
            return self.inner.handle_request(request)
        try:
            response = self.inner.handle_request(request)
        except Exception as exc:
            self.calls.failed(pending, exc)
            raise
        return self.calls.relay(pending, response, _SyncTee)

    def close(self) -> None:
        self.inner.close()


class AsyncRecordingTransport(httpx2.AsyncBaseTransport):
    """The async transport (``openai.AsyncOpenAI``)."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, calls: CallRecorder) -> None:
        self.inner = inner
        self.calls = calls

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            pending = self.calls.begin(request, await request.aread())
        except Refused as refused:
            return refused.response()
        if pending is None:
            return await self.inner.handle_async_request(request)
        try:
            response = await self.inner.handle_async_request(request)
        except Exception as exc:
            self.calls.failed(pending, exc)
            raise
        return self.calls.relay(pending, response, _AsyncTee)

    async def aclose(self) -> None:
        await self.inner.aclose()


class _Body:
    """A body kept as it passes, chunk by chunk; handed whole to ``done`` once: at its end, on close before it, or
    with the error that stopped it."""

    def __init__(self, done: _Done) -> None:
        self.done, self.chunks, self.ended = done, list[bytes](), False

    def add(self, chunk: bytes) -> bytes:
        self.chunks.append(chunk)
        return chunk

    def end(self, stopped: Exception | None = None) -> None:
        if not self.ended:
            self.ended = True
            self.done(b"".join(self.chunks), stopped)


class _SyncTee(httpx2.SyncByteStream):
    """Passes the body on as it arrives; hands the whole of it to ``done`` once, at its end or when closed."""

    def __init__(self, inner: object, done: _Done) -> None:
        assert isinstance(inner, httpx2.SyncByteStream)
        self.inner, self.body = inner, _Body(done)

    def __iter__(self) -> Iterator[bytes]:
        try:
            for chunk in self.inner:
                yield self.body.add(chunk)
        except Exception as exc:
            self.body.end(exc)
            raise
        self.body.end()

    def close(self) -> None:
        try:
            self.inner.close()
        finally:
            self.body.end()


class _AsyncTee(httpx2.AsyncByteStream):
    def __init__(self, inner: object, done: _Done) -> None:
        assert isinstance(inner, httpx2.AsyncByteStream)
        self.inner, self.body = inner, _Body(done)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self.inner:
                yield self.body.add(chunk)
        except Exception as exc:
            self.body.end(exc)
            raise
        self.body.end()

    async def aclose(self) -> None:
        try:
            await self.inner.aclose()
        finally:
            self.body.end()


def _failure(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"


def _retries(request: httpx2.Request) -> int:
    try:
        return max(0, int(request.headers.get(_RETRY_HEADER, "0")))
    except ValueError:
        return 0


def _decoded(response: httpx2.Response, raw: bytes) -> str:
    """The body as text, undoing its content encoding (gzip, brotli) as the client would."""
    copy = httpx2.Response(response.status_code, headers=response.headers, content=raw)
    try:
        return copy.read().decode(copy.encoding or "utf-8", errors="replace")
    except httpx2.DecodingError:
        return raw.decode("utf-8", errors="replace")
