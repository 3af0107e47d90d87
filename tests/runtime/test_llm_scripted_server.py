"""The scripted OpenAI-compatible server itself: queue, rules, handler, recording, both hostings."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request

import openai
import pytest

from p2w_runtime.testing import (
    Delay,
    HttpError,
    ScriptedLlm,
    Text,
    Usage,
    all_of,
    last_user_contains,
    last_user_message,
    system_contains,
)

PLANNER = {"role": "system", "content": "ROLE: planner. Plan the next action."}
GENERATOR = {"role": "system", "content": "ROLE: generator. Answer from the history entries."}


def ask(server: ScriptedLlm, *messages: dict[str, str], **extra: object) -> str | None:
    """A sync call through the real openai client, as CLI code running in another thread would make it."""
    client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
    reply = client.chat.completions.create(model="m", messages=list(messages), **extra)  # type: ignore[arg-type]
    return reply.choices[0].message.content


def post_raw(server: ScriptedLlm, body: dict[str, object]) -> tuple[int, dict[str, object]]:
    request = urllib.request.Request(
        f"{server.base_url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_rules_answer_by_content_not_by_order(scripted_llm: ScriptedLlm) -> None:
    scripted_llm.rule(system_contains("ROLE: generator"), "The user prefers size M [entry 4].")
    scripted_llm.rule(all_of(system_contains("ROLE: planner"), last_user_contains("clothing shop")), "click [7]")
    scripted_llm.rule(system_contains("ROLE: planner"), lambda req: f"echo {last_user_message(req)}")

    assert (
        ask(scripted_llm, GENERATOR, {"role": "user", "content": "What size?"}) == "The user prefers size M [entry 4]."
    )
    assert ask(scripted_llm, PLANNER, {"role": "user", "content": "page: clothing shop"}) == "click [7]"
    assert ask(scripted_llm, PLANNER, {"role": "user", "content": "page: search"}) == "echo page: search"
    assert len(scripted_llm.chat_requests) == 3


def test_queue_comes_first_and_rules_can_be_bounded(scripted_llm: ScriptedLlm) -> None:
    scripted_llm.rule("hello", "rule answer", times=1)
    scripted_llm.handle_with(lambda req: Text(f"handler saw {len(req['messages'])} message(s)"))
    scripted_llm.script("queued answer")
    user = {"role": "user", "content": "hello"}

    assert [ask(scripted_llm, user) for _ in range(3)] == [
        "queued answer",
        "rule answer",
        "handler saw 1 message(s)",
    ]
    assert scripted_llm.pending == 0


def test_unscripted_request_is_a_clear_400(scripted_llm: ScriptedLlm) -> None:
    status, body = post_raw(scripted_llm, {"model": "m", "messages": [{"role": "user", "content": "anything?"}]})
    assert status == 400
    assert "no reply scripted" in body["error"]["message"] and "anything?" in body["error"]["message"]  # type: ignore[index]
    assert scripted_llm.unanswered == 1


def test_completion_shape_usage_and_response_format(scripted_llm: ScriptedLlm) -> None:
    scripted_llm.script(Text('{"a": 1}', usage=Usage(7, 3)), Text("no usage", usage=None))
    fmt = {"type": "json_schema", "json_schema": {"name": "A", "schema": {"type": "object"}}}
    status, body = post_raw(scripted_llm, {"model": "gpt-x", "messages": [PLANNER], "response_format": fmt})
    assert status == 200 and body["model"] == "gpt-x"
    assert body["choices"][0]["message"]["content"] == '{"a": 1}'  # type: ignore[index]
    assert body["usage"] == {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
    _, body = post_raw(scripted_llm, {"model": "gpt-x", "messages": [PLANNER]})
    assert "usage" not in body
    assert scripted_llm.chat_requests[0]["response_format"] == fmt


def test_error_replies_are_openai_shaped(scripted_llm: ScriptedLlm) -> None:
    scripted_llm.script(HttpError(429, "Rate limit reached", retry_after=2))
    with pytest.raises(openai.RateLimitError) as info:
        ask(scripted_llm, {"role": "user", "content": "x"})
    assert info.value.status_code == 429 and "Rate limit reached" in info.value.message
    assert info.value.response.headers["retry-after"] == "2"


def test_models_endpoint_lists_the_configured_models() -> None:
    with ScriptedLlm(models=("gpt-4.1-mini", "local")) as server:
        listed = openai.OpenAI(base_url=server.base_url, api_key="k").models.list()
        assert [m.id for m in listed.data] == ["gpt-4.1-mini", "local"]
        assert server.requests[0].method == "GET" and server.chat_requests == []


async def test_in_process_hosting_starts_and_frees_its_port() -> None:
    async with ScriptedLlm() as server:
        server.script(Delay(0.01, Text("later")))
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        reply = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        assert reply.choices[0].message.content == "later"
        port = server.port
        await client.close()
    with socket.socket() as probe, pytest.raises(ConnectionRefusedError):
        probe.connect(("127.0.0.1", port))
