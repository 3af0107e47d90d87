"""An LLM attempt has a deadline on its whole answer and a size limit on its body: a server trickling a byte at a
time ends in a timeout (the HTTP library's timeout is per read, which a trickle never reaches), and a body over the
limit is refused without being read to its end. Both are recorded as failed attempts, like any other."""

from __future__ import annotations

import asyncio
import time
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
