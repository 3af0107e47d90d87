"""The one way the project talks to an LLM: every attempt becomes an ``llm.call`` payload.

Built on ``openai.AsyncOpenAI`` with its own retries off, so each attempt (and its
failure) is visible and recorded. One client holds the connection pool for a run;
``scoped()`` gives each episode its own sink, ordinals and totals over that pool.
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar, cast

import structlog
from pydantic import BaseModel

from p2w_rt.schemas import LlmCall, LlmRole, LlmUsage
from p2w_runtime.llm._endpoint import endpoint
from p2w_runtime.llm._errors import LlmBadResponse, LlmRejected, LlmTooLong, LlmUnavailable
from p2w_runtime.llm._prices import PriceTable
from p2w_runtime.llm._request import (
    MAX_REPLY_BYTES,
    BadResponse,
    Completion,
    fingerprint,
    parse_completion,
    response_format_param,
)
from p2w_runtime.llm._retry import Failure, RetryPolicy, describe
from p2w_runtime.llm._structured import MalformedOutput, parse_structured, repair_messages
from p2w_runtime.llm._totals import UsageTotals
from p2w_runtime.redaction import add_secret, add_url_credentials, redact, redact_text

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

log = structlog.get_logger(__name__)

Sink = Callable[[LlmCall], Awaitable[None]]
T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class LlmResult:
    text: str
    model: str
    finish_reason: str | None
    usage: LlmUsage | None
    latency_s: float
    fingerprint: str
    ordinal: int
    attempts: int
    cost_usd: float | None
    call: LlmCall
    """The recorded payload of the attempt that answered."""


class _Unusable(Exception):
    """Internal: an answer that failed structured parsing, with what was wrong (for the repair prompt)."""

    def __init__(self, answer: str, problem: str) -> None:
        super().__init__(problem)
        self.answer = answer
        self.problem = problem


class LlmClient:
    """Chat completions against any OpenAI-compatible endpoint, recorded attempt by attempt.

    ``role_params`` are per-role request parameters (temperature, max_tokens, seed...) merged
    under the per-call ``params``; both are recorded and part of the fingerprint. Each attempt must be answered
    whole within ``timeout_s`` and in at most ``max_reply_bytes`` (``_limits``), else it fails like a timeout or
    a bad response.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        sink: Sink | None = None,
        role_params: Mapping[str, Mapping[str, Any]] | None = None,
        retry: RetryPolicy | None = None,
        timeout_s: float = 120.0,
        prices: PriceTable | None = None,
        max_repairs: int = 2,
        max_reply_bytes: int = MAX_REPLY_BYTES,
    ) -> None:
        base_url, api_key, self.endpoint = endpoint(base_url, api_key)
        self.model = model
        self.role_params = {role: dict(p) for role, p in (role_params or {}).items()}
        self.retry = retry or RetryPolicy()
        self.timeout_s = timeout_s
        self.prices = prices if prices is not None else PriceTable.default()
        self.max_repairs = max_repairs
        add_secret(api_key)
        add_url_credentials(base_url)
        import openai  # loaded when a client is made: a command that never calls a model never pays for it

        from p2w_runtime.llm._limits import capped_http_client

        capped = capped_http_client(max_reply_bytes)
        self._openai = openai.AsyncOpenAI(
            api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=0, http_client=capped
        )
        self._failures: tuple[type[Exception], ...] = (openai.APIError, BadResponse, TimeoutError)
        self._owns_transport = True
        self._sink = sink
        self._ordinals: Counter[str] = Counter()
        self.totals = UsageTotals()

    def scoped(self, sink: Sink | None) -> LlmClient:
        """A view for one episode (or one judgment): same pool and settings, its own sink, ordinals and totals."""
        scope = copy.copy(self)
        scope._owns_transport = False
        scope._sink = sink
        scope._ordinals = Counter()
        scope.totals = UsageTotals()
        return scope

    async def aclose(self) -> None:
        if self._owns_transport:
            await self._openai.close()

    async def __aenter__(self) -> LlmClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- calls -----------------------------------------------------------------------

    async def complete(
        self,
        role: LlmRole,
        messages: list[dict[str, Any]],
        *,
        params: Mapping[str, Any] | None = None,
        step: int | None = None,
        response_format: dict[str, Any] | type[BaseModel] | None = None,
    ) -> LlmResult:
        """One logical call: retried on timeouts, connection errors, 429/5xx and unusable bodies.

        Raises ``LlmUnavailable`` / ``LlmBadResponse`` after the last attempt, ``LlmRejected`` at once on other 4xx.
        """
        result, _ = await self._complete(role, messages, params, step, response_format, None)
        return result

    async def complete_json(
        self,
        role: LlmRole,
        messages: list[dict[str, Any]],
        schema: type[T],
        *,
        params: Mapping[str, Any] | None = None,
        step: int | None = None,
        use_response_format: bool = True,
    ) -> T:
        """Ask for a ``schema`` instance; a malformed answer is recorded with its error and repaired by asking again.

        ``use_response_format=False`` for endpoints that reject ``json_schema`` response formats.
        """
        response_format = schema if use_response_format else None
        conversation = list(messages)
        problem = ""
        for _ in range(self.max_repairs + 1):
            try:
                _, value = await self._complete(
                    role, conversation, params, step, response_format, lambda text: parse_structured(text, schema)
                )
                return value
            except _Unusable as exc:
                problem = redact_text(exc.problem)
                conversation = repair_messages(messages, exc.answer, problem)
        raise LlmBadResponse(
            f"LLM endpoint {self.endpoint} gave no valid {schema.__name__} for {role} ({self.model}) "
            f"in {self.max_repairs + 1} answer(s); last problem: {problem}"
        )

    async def _complete(
        self,
        role: LlmRole,
        messages: list[dict[str, Any]],
        params: Mapping[str, Any] | None,
        step: int | None,
        response_format: dict[str, Any] | type[BaseModel] | None,
        parse: Callable[[str], Any] | None,
    ) -> tuple[LlmResult, Any]:
        messages = copy.deepcopy(messages)
        sent = {**self.role_params.get(role, {}), **(params or {})}
        if (fmt := response_format_param(response_format)) is not None:
            sent["response_format"] = fmt
        key = fingerprint(self.model, messages, sent)
        ordinal = self._ordinals[key]
        self._ordinals[key] += 1

        def record(attempt: int, latency: float, completion: Completion | None, error: str | None) -> LlmCall:
            usage = completion.usage if completion else None
            cost = self._cost(completion) if completion else None
            return LlmCall.model_validate(
                redact(
                    {
                        "role": role,
                        "model": self.model,
                        "step": step,
                        "messages": messages,
                        "params": sent,
                        "response": completion.text if completion else None,
                        "finish_reason": completion.finish_reason if completion else None,
                        "usage": usage.model_dump() if usage else None,
                        "latency_s": latency,
                        "fingerprint": key,
                        "ordinal": ordinal,
                        "attempt": attempt,
                        "error": error,
                        "cost_usd": cost,
                    }
                )
            )

        total = self.retry.max_retries + 1
        last: Failure | None = None
        for attempt in range(1, total + 1):
            started = time.perf_counter()
            try:
                async with asyncio.timeout(self.timeout_s):  # the whole answer: the HTTP timeout is per read
                    completion = await self._send(messages, sent)
            except self._failures as exc:
                last = describe(exc, self.timeout_s)
                last = replace(last, message=redact_text(last.message))
                await self._emit(record(attempt, time.perf_counter() - started, None, last.message))
                if not last.retriable:
                    raise (LlmTooLong if last.too_long else LlmRejected)(
                        f"LLM endpoint {self.endpoint} rejected the {role} request for model {self.model}: "
                        f"{last.message}"
                    ) from None
                if attempt < total:
                    delay = self.retry.delay(attempt, last.retry_after)
                    log.warning(
                        "llm.retry",
                        endpoint=self.endpoint,
                        role=role,
                        attempt=attempt,
                        error=last.message,
                        delay_s=round(delay, 3),
                    )
                    await asyncio.sleep(delay)
                continue
            latency = time.perf_counter() - started
            try:
                value = parse(completion.text) if parse else None
            except MalformedOutput as exc:
                await self._emit(record(attempt, latency, completion, f"malformed output: {exc}"))
                raise _Unusable(completion.text, str(exc)) from None
            call = record(attempt, latency, completion, None)
            await self._emit(call)
            return LlmResult(
                text=completion.text,
                model=self.model,
                finish_reason=completion.finish_reason,
                usage=completion.usage,
                latency_s=latency,
                fingerprint=key,
                ordinal=ordinal,
                attempts=attempt,
                cost_usd=call.cost_usd,
                call=call,
            ), value
        assert last is not None
        error = LlmBadResponse if last.bad_response else LlmUnavailable
        raise error(
            f"LLM endpoint {self.endpoint} failed {total} attempt(s) for {role} ({self.model}); "
            f"last error: {last.message}"
        )

    async def _send(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> Completion:
        raw = await self._openai.chat.completions.with_raw_response.create(
            model=self.model,
            messages=cast("list[ChatCompletionMessageParam]", messages),  # our dicts are the wire format
            extra_body=params or None,
        )
        return parse_completion(raw.text, raw.headers.get("content-type"))

    def _cost(self, completion: Completion) -> float | None:
        cost = self.prices.cost(self.model, completion.usage)
        if cost is None and completion.model and completion.model != self.model:
            cost = self.prices.cost(completion.model, completion.usage)
        return cost

    async def _emit(self, call: LlmCall) -> None:
        self.totals.add(call)
        if self._sink is not None:
            await self._sink(call)
