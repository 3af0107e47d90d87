"""LlmClient against the scripted server: every attempt recorded, bounded retries, clear failures."""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import time
from collections.abc import AsyncIterator

import pytest
from pydantic import BaseModel

from p2w_rt.schemas import LlmCall, canonical_json
from p2w_runtime.llm import (
    LlmBadResponse,
    LlmClient,
    LlmConfigError,
    LlmRejected,
    LlmUnavailable,
    PriceTable,
    RetryPolicy,
)
from p2w_runtime.llm._request import BadResponse, fingerprint
from p2w_runtime.llm._wire import parse_answer
from p2w_runtime.testing import Delay, Garbage, HttpError, ScriptedLlm, Text, Usage
from tests.helpers.llm_clients import MadeClients

API_KEY = "sk-p2w-test-SECRET-9f8e7d6c5b4a3210"
FAST = RetryPolicy(max_retries=2, base_delay_s=0.001, max_delay_s=0.01)
ASK = [{"role": "system", "content": "You are the planner."}, {"role": "user", "content": "Find a red jacket."}]


class Calls(list[LlmCall]):
    """The sink the agent would give: here it just keeps the payloads."""

    async def __call__(self, call: LlmCall) -> None:
        self.append(call)


@pytest.fixture(autouse=True)
def _no_ambient_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "P2W_PRICES"):
        monkeypatch.delenv(name, raising=False)


CLIENTS = MadeClients()


@pytest.fixture(autouse=True)
async def _closed_clients() -> AsyncIterator[None]:
    yield
    await CLIENTS.aclose()


def make_client(server: ScriptedLlm, calls: Calls, **kwargs: object) -> LlmClient:
    settings: dict[str, object] = {"retry": FAST, "timeout_s": 5.0}
    settings.update(kwargs)
    return CLIENTS("gpt-4o-mini", base_url=server.base_url, api_key=API_KEY, sink=calls, **settings)  # type: ignore[arg-type]


async def test_success_records_one_call_with_usage_cost_and_merged_params(scripted_llm: ScriptedLlm) -> None:
    scripted_llm.script(Text("click [12]", usage=Usage(1000, 500)))
    calls = Calls()
    client = make_client(scripted_llm, calls, role_params={"planner": {"temperature": 0.0, "max_tokens": 300}})

    result = await client.complete("planner", ASK, params={"max_tokens": 200}, step=3)

    assert result.text == "click [12]"
    assert result.usage is not None and result.usage.total_tokens == 1500
    assert result.cost_usd == pytest.approx(1000 / 1000 * 0.00015 + 500 / 1000 * 0.0006)
    assert (result.ordinal, result.attempts) == (0, 1)
    [call] = calls
    assert call == result.call
    assert (call.role, call.model, call.step, call.attempt, call.error) == ("planner", "gpt-4o-mini", 3, 1, None)
    assert call.messages == ASK
    assert call.params == {"temperature": 0.0, "max_tokens": 200}
    assert call.response == "click [12]" and call.finish_reason == "stop"
    assert call.fingerprint == fingerprint("gpt-4o-mini", ASK, {"temperature": 0.0, "max_tokens": 200})
    assert call.latency_s > 0
    [body] = scripted_llm.chat_requests
    assert body["temperature"] == 0.0 and body["max_tokens"] == 200 and body["model"] == "gpt-4o-mini"
    assert client.totals.prompt_tokens == 1000 and client.totals.cost_usd == pytest.approx(result.cost_usd)


async def test_missing_usage_is_tolerated_and_leaves_cost_unknown(scripted_llm: ScriptedLlm) -> None:
    scripted_llm.script(Text("stop [done]", usage=None))
    calls = Calls()
    result = await make_client(scripted_llm, calls).complete("planner", ASK)
    assert result.usage is None and result.cost_usd is None
    assert calls[0].usage is None and calls[0].cost_usd is None and calls[0].response == "stop [done]"


async def test_a_token_count_past_64_bits_is_read_as_not_given(scripted_llm: ScriptedLlm) -> None:
    scripted_llm.script(Text("stop [done]", usage=Usage(10**25, 7)))
    calls = Calls()
    result = await make_client(scripted_llm, calls).complete("planner", ASK)
    assert result.usage is not None and (result.usage.prompt_tokens, result.usage.completion_tokens) == (0, 7)
    canonical_json(calls[0].model_dump())  # the payload can be stored


async def test_500_then_success_records_both_attempts_under_one_ordinal(scripted_llm: ScriptedLlm) -> None:
    scripted_llm.script(HttpError(500, "upstream exploded"), Text("ok"))
    calls = Calls()
    result = await make_client(scripted_llm, calls).complete("generator", ASK)

    assert result.text == "ok" and result.attempts == 2
    assert [c.attempt for c in calls] == [1, 2]
    assert calls[0].error == "HTTP 500: upstream exploded" and calls[0].response is None
    assert calls[1].error is None
    assert {c.fingerprint for c in calls} == {result.fingerprint} and {c.ordinal for c in calls} == {0}
    assert len(scripted_llm.chat_requests) == 2


async def test_429_until_exhaustion_raises_unavailable_with_every_attempt_recorded(scripted_llm: ScriptedLlm) -> None:
    scripted_llm.rule(lambda _: True, HttpError(429, "Rate limit reached"))
    calls = Calls()
    with pytest.raises(LlmUnavailable) as info:
        await make_client(scripted_llm, calls).complete("planner", ASK)

    message = str(info.value)
    assert scripted_llm.base_url in message and "HTTP 429: Rate limit reached" in message and "3 attempt" in message
    assert [c.attempt for c in calls] == [1, 2, 3]
    assert all(c.error == "HTTP 429: Rate limit reached" and c.response is None for c in calls)
    assert len(scripted_llm.chat_requests) == 3


async def test_retry_after_is_honoured_within_the_cap(scripted_llm: ScriptedLlm) -> None:
    scripted_llm.script(HttpError(429, "slow down", retry_after=0.3), Text("ok"))
    policy = RetryPolicy(max_retries=1, base_delay_s=0.001, max_delay_s=1.0, jitter=0.0)
    started = time.perf_counter()
    await make_client(scripted_llm, Calls(), retry=policy).complete("planner", ASK)
    assert time.perf_counter() - started >= 0.3


async def test_client_errors_other_than_429_are_not_retried(scripted_llm: ScriptedLlm) -> None:
    scripted_llm.script(HttpError(404, "The model `gpt-4o-mini` does not exist"))
    calls = Calls()
    with pytest.raises(LlmRejected, match="does not exist"):
        await make_client(scripted_llm, calls).complete("judge", ASK)
    # the 404 is final: the server answered exactly one request and nothing was tried after it
    # (on a loaded machine a connection error may precede it; that attempt never reaches the server)
    assert len(scripted_llm.chat_requests) == 1 and scripted_llm.unanswered == 0
    assert calls[-1].error is not None and calls[-1].error.startswith("HTTP 404")


async def test_timeout_is_recorded_and_retried(scripted_llm: ScriptedLlm) -> None:
    scripted_llm.script(Delay(2.0), Text("on time"))
    calls = Calls()
    result = await make_client(scripted_llm, calls, timeout_s=0.2).complete("planner", ASK)
    assert result.text == "on time"
    assert calls[0].error == "timeout after 0.2s" and calls[0].latency_s >= 0.2


async def test_timeouts_until_exhaustion_raise_unavailable(scripted_llm: ScriptedLlm) -> None:
    scripted_llm.rule(lambda _: True, Delay(2.0))
    calls = Calls()
    with pytest.raises(LlmUnavailable, match="timeout after 0.2s"):
        await make_client(scripted_llm, calls, timeout_s=0.2).complete("planner", ASK)
    assert len(calls) == 3 and all(c.error == "timeout after 0.2s" for c in calls)


async def test_garbage_is_a_failed_attempt_then_bad_response(scripted_llm: ScriptedLlm) -> None:
    scripted_llm.script(
        Garbage(), Garbage.without_choices(), Garbage(body="{not json", content_type="application/json")
    )
    calls = Calls()
    with pytest.raises(LlmBadResponse, match="bad response"):
        await make_client(scripted_llm, calls).complete("planner", ASK)
    assert "body is not JSON" in calls[0].error and "502 Bad Gateway" in calls[0].error
    assert "no choices" in calls[1].error
    assert "body is not JSON" in calls[2].error
    assert all(c.response is None for c in calls)


async def test_garbage_then_success_recovers(scripted_llm: ScriptedLlm) -> None:
    scripted_llm.script(Garbage.without_choices(), Text("fine"))
    calls = Calls()
    result = await make_client(scripted_llm, calls).complete("planner", ASK)
    assert result.text == "fine" and [c.error is None for c in calls] == [False, True]


async def test_endpoint_down_names_the_endpoint() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    calls = Calls()
    client = CLIENTS("any-model", base_url=f"http://127.0.0.1:{port}/v1", api_key=API_KEY, sink=calls, retry=FAST)
    with pytest.raises(LlmUnavailable) as info:
        await client.complete("planner", ASK)
    assert f"http://127.0.0.1:{port}/v1" in str(info.value) and "connection error" in str(info.value)
    assert len(calls) == 3 and all(c.error and c.error.startswith("connection error") for c in calls)


async def test_a_reset_connection_says_so() -> None:
    """The HTTP library wraps the OS error in exceptions with empty messages: the recorded error is not left blank."""

    async def reset(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.close()

    server = await asyncio.start_server(reset, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    calls = Calls()
    client = CLIENTS("any-model", base_url=f"http://127.0.0.1:{port}/v1", api_key=API_KEY, sink=calls, retry=FAST)
    async with server:
        with pytest.raises(LlmUnavailable, match="connection error: .*reset"):
            await client.complete("planner", ASK)
    assert len(calls) == 3 and all(c.error and "reset" in c.error for c in calls)


async def test_identical_requests_get_increasing_ordinals_per_scope(scripted_llm: ScriptedLlm) -> None:
    scripted_llm.rule(lambda _: True, "same answer")
    run_calls, episode_calls = Calls(), Calls()
    client = make_client(scripted_llm, run_calls)

    ordinals = [(await client.complete("planner", ASK)).ordinal for _ in range(3)]
    other = await client.complete("planner", [*ASK, {"role": "user", "content": "again"}])
    episode = client.scoped(episode_calls)
    scoped = await episode.complete("planner", ASK)

    assert ordinals == [0, 1, 2] and other.ordinal == 0
    assert len({c.fingerprint for c in run_calls[:3]}) == 1 and other.fingerprint != run_calls[0].fingerprint
    assert scoped.ordinal == 0 and [c.ordinal for c in episode_calls] == [0]
    assert len(run_calls) == 4, "a scope's calls go to its own sink only"
    assert (client.totals.calls, episode.totals.calls) == (4, 1)


async def test_concurrent_identical_requests_get_distinct_ordinals(scripted_llm: ScriptedLlm) -> None:
    scripted_llm.rule(lambda _: True, Delay(0.05, Text("x")))
    client = make_client(scripted_llm, Calls())
    results = await asyncio.gather(*(client.complete("planner", ASK) for _ in range(3)))
    assert sorted(r.ordinal for r in results) == [0, 1, 2]


async def test_api_key_never_reaches_a_payload(scripted_llm: ScriptedLlm) -> None:
    scripted_llm.script(
        HttpError(500, f"invalid key {API_KEY}"),
        Text(f"I saw {API_KEY}"),
        HttpError(401, f"Incorrect API key provided: {API_KEY}"),
    )
    calls = Calls()
    client = make_client(scripted_llm, calls)
    await client.complete("planner", ASK)
    with pytest.raises(LlmRejected) as info:
        await client.complete("judge", ASK)

    assert len(calls) == 3
    assert scripted_llm.requests[0].headers["Authorization"] == f"Bearer {API_KEY}", "the key was really sent"
    recorded = json.dumps([c.model_dump(mode="json") for c in calls])
    assert API_KEY not in recorded and "***" in recorded
    assert API_KEY not in str(info.value)


class Verdict(BaseModel):
    score: int
    reason: str


async def test_complete_json_repairs_a_malformed_answer(scripted_llm: ScriptedLlm) -> None:
    scripted_llm.script(
        Text("The answer looks good."),
        Text('{"score": "high", "reason": "ok"}'),
        Text('Here you go:\n```json\n{"score": 2, "reason": "matches preferences"}\n```'),
    )
    calls = Calls()
    verdict = await make_client(scripted_llm, calls).complete_json("judge", ASK, Verdict)

    assert verdict == Verdict(score=2, reason="matches preferences")
    assert [c.error is not None for c in calls] == [True, True, False]
    assert "no JSON object" in calls[0].error and calls[0].response == "The answer looks good."
    assert "score" in calls[1].error
    first, second, _ = scripted_llm.chat_requests
    assert first["response_format"]["json_schema"]["name"] == "Verdict"
    assert second["messages"][-2] == {"role": "assistant", "content": "The answer looks good."}
    assert "not valid" in second["messages"][-1]["content"]


async def test_complete_json_gives_up_with_bad_response(scripted_llm: ScriptedLlm) -> None:
    scripted_llm.rule(lambda _: True, "no idea")
    calls = Calls()
    with pytest.raises(LlmBadResponse, match="no valid Verdict"):
        await make_client(scripted_llm, calls, max_repairs=1).complete_json("judge", ASK, Verdict)
    assert len(calls) == 2 and len(scripted_llm.chat_requests) == 2


async def test_json_nested_too_deep_is_a_bad_answer_not_a_crash(scripted_llm: ScriptedLlm) -> None:
    """Python's JSON parser gives up on deep nesting with a RecursionError: an answer, or a body, made of it is unusable
    like any other malformed one (recorded, repaired or retried), never a traceback."""
    deep = "[" * 100_000
    scripted_llm.script(Text(deep), Garbage(deep, content_type="application/json"))
    calls = Calls()
    with pytest.raises(LlmBadResponse):
        await make_client(scripted_llm, calls, max_repairs=0, retry=RetryPolicy(max_retries=0)).complete_json(
            "judge", ASK, Verdict
        )
    with pytest.raises(LlmBadResponse):
        await make_client(scripted_llm, calls, retry=RetryPolicy(max_retries=0)).complete("judge", ASK)
    assert [c.response == deep for c in calls] == [True, False]
    assert "no JSON object" in str(calls[0].error) and "not JSON" in str(calls[1].error)
    with pytest.raises(BadResponse, match="not JSON"):  # a streamed answer, as the recording proxy reads it
        parse_answer("chat", f"data: {deep}\n\n", "text/event-stream", stream=True)


async def test_complete_json_can_skip_response_format(scripted_llm: ScriptedLlm) -> None:
    scripted_llm.script('{"score": 1, "reason": "r"}')
    await make_client(scripted_llm, Calls()).complete_json("judge", ASK, Verdict, use_response_format=False)
    assert "response_format" not in scripted_llm.chat_requests[0]


async def test_endpoint_and_key_come_from_the_environment(
    scripted_llm: ScriptedLlm, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", scripted_llm.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    scripted_llm.script("hello")
    client = CLIENTS("local-model", retry=FAST, prices=PriceTable({}))
    assert (await client.complete("planner", ASK)).text == "hello"
    assert scripted_llm.requests[0].headers["Authorization"] == f"Bearer {API_KEY}"


def test_openai_endpoint_without_key_is_a_config_error() -> None:
    with pytest.raises(LlmConfigError, match="OPENAI_API_KEY"):
        LlmClient("gpt-4.1")


async def test_keyless_local_endpoint_is_allowed(scripted_llm: ScriptedLlm) -> None:
    scripted_llm.script("hi")
    client = CLIENTS("local", base_url=scripted_llm.base_url, retry=FAST)
    assert (await client.complete("planner", ASK)).text == "hi"
