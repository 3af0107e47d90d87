"""An LLM attempt has a deadline on its whole answer and a size limit on its body: a server trickling a byte at a
time ends in a timeout (the HTTP library's timeout is per read, which a trickle never reaches), and a body over the
limit is refused without being read to its end. Both are recorded as failed attempts, like any other."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import zlib
from typing import Any

import pytest

from p2w_rt.schemas import LlmCall
from p2w_runtime.llm import LlmBadResponse, LlmClient, LlmUnavailable, RetryPolicy
from tests.helpers.stalling_llm import Flood, StallingLlm, Trickle

ASK = [{"role": "user", "content": "Judge this."}]
KEY = "sk-never-shown-1234"
MIB = 2**20
GUARD_S = 60
"""Longer than any of these calls may take on a loaded machine: an attempt without a deadline fails here instead
of hanging the suite."""


async def ask(server: StallingLlm, **kwargs: Any) -> tuple[list[LlmCall], BaseException]:
    calls: list[LlmCall] = []

    async def sink(call: LlmCall) -> None:
        calls.append(call)

    client = LlmClient("m", base_url=server.base_url, api_key=KEY, sink=sink, retry=RetryPolicy(0), **kwargs)
    async with client:
        with pytest.raises(Exception) as raised:
            await asyncio.wait_for(client.complete("judge", ASK), GUARD_S)
    return calls, raised.value


async def test_a_trickling_answer_ends_at_the_deadline() -> None:
    with StallingLlm(lambda n, request: Trickle(every_s=0.2)) as server:
        started = time.monotonic()
        calls, error = await ask(server, timeout_s=1.0)
        took = time.monotonic() - started
    assert isinstance(error, LlmUnavailable), error
    message = str(error)
    assert "timeout after 1s" in message and f"127.0.0.1:{server.port}" in message and KEY not in message
    assert "\n" not in message
    assert took < GUARD_S / 2
    assert [c.error for c in calls] == ["timeout after 1s"]  # the failed attempt is recorded


@pytest.mark.parametrize("declared", [False, True], ids=["chunked", "content-length"])
async def test_an_answer_over_the_size_limit_is_refused_unread(declared: bool) -> None:
    """The default limit: far above any answer, far below what would strain memory."""
    size = 64 * MIB
    with StallingLlm(lambda n, request: Flood(size, declared=declared)) as server:
        calls, error = await ask(server)
    assert isinstance(error, LlmBadResponse), error
    message = str(error)
    assert "over the 16 MiB limit" in message and f"127.0.0.1:{server.port}" in message and KEY not in message
    assert len(calls) == 1 and calls[0].error is not None and "16 MiB limit" in calls[0].error
    # what was sent before the client closed: its limit and the sockets' buffers, far from the whole body
    assert server.body_bytes_sent and server.body_bytes_sent[0] < size / 2


async def test_answers_within_the_limits_are_read_as_before() -> None:
    with StallingLlm(lambda n, request: "fine" * 1000) as server:
        async with LlmClient("m", base_url=server.base_url, api_key=KEY, max_reply_bytes=MIB, timeout_s=30) as c:
            result = await c.complete("judge", ASK)
    assert result.text == "fine" * 1000


def gzipped(body: bytes, copies: int = 1) -> bytes:
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: the gzip format
    return b"".join(squeeze.compress(body) for _ in range(copies)) + squeeze.flush()


async def gzip_server(body: bytes) -> asyncio.Server:
    """A server that ignores ``Accept-Encoding: identity`` and answers ``body`` gzipped."""
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: {len(body)}"

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(head.encode() + b"\r\n\r\n" + body)
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        writer.close()

    return await asyncio.start_server(answer, "127.0.0.1", 0)


async def test_a_gzipped_answer_is_read_when_it_inflates_within_the_limit() -> None:
    """An endpoint that compresses although asked not to still answers: its body is counted as it inflates."""
    answer = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "fine"}, "finish_reason": "stop"}]}
    server = await gzip_server(gzipped(json.dumps({"id": "x", "object": "chat.completion", **answer}).encode()))
    port = server.sockets[0].getsockname()[1]
    client = LlmClient("m", base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY, retry=RetryPolicy(0))
    async with server, client:
        result = await asyncio.wait_for(client.complete("judge", ASK), GUARD_S)
    assert result.text == "fine"


async def test_a_gzip_bomb_is_refused_as_it_inflates() -> None:
    """A gzip body a few KiB long that inflates past the limit (here 64 MiB of zeros): counted inflated, it is refused
    once past the limit, never held whole."""
    server = await gzip_server(gzipped(bytes(MIB), 64))
    port = server.sockets[0].getsockname()[1]
    calls: list[LlmCall] = []

    async def sink(call: LlmCall) -> None:
        calls.append(call)

    client = LlmClient("m", base_url=f"http://127.0.0.1:{port}/v1", api_key=KEY, sink=sink, retry=RetryPolicy(0))
    async with server, client:
        with pytest.raises(LlmBadResponse) as raised:
            await asyncio.wait_for(client.complete("judge", ASK), GUARD_S)
    assert "the answer is over the 16 MiB limit; not read further" in str(raised.value)
    assert KEY not in str(raised.value) and len(calls) == 1 and calls[0].error is not None
