"""An answer of several choices (``n`` > 1, a Responses answer of several messages) is recorded whole and served back
whole, by the recording API's ``served`` and by the replay endpoint of ``rerun --exec`` (docs/design/exec.md)."""

from __future__ import annotations

import json
from typing import Any

import openai

from p2w_rt.schemas import LlmCall, LlmChoice
from p2w_runtime.exec import EpisodeReplay, ReplayEndpoint
from p2w_runtime.recording import RecordedCalls, instrument, open_run, served
from p2w_runtime.rerun import load_episode
from p2w_runtime.store import EventStore
from p2w_runtime.testing import Garbage, ScriptedLlm
from tests.helpers.recording_tasks import TASKS

ASK = [{"role": "user", "content": "Two ideas, please."}]
CHAT = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "m",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "first idea"}, "finish_reason": "stop"},
        {"index": 1, "message": {"role": "assistant", "content": "second idea"}, "finish_reason": "length"},
    ],
    "usage": {"prompt_tokens": 5, "completion_tokens": 4, "total_tokens": 9},
}


def _chunk(index: int, content: str | None, finish: str | None) -> str:
    delta = {"content": content} if content is not None else {}
    choice = {"index": index, "delta": delta, "finish_reason": finish}
    return "data: " + json.dumps({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                                  "choices": [choice]}) + "\n\n"  # fmt: skip


STREAMED = (
    _chunk(0, "first ", None) + _chunk(1, "second ", None) + _chunk(0, "idea", None) + _chunk(1, "idea", "length")
    + _chunk(0, None, "stop") + "data: [DONE]\n\n"
)  # fmt: skip
"""Two choices interleaved, as a provider streams ``n`` = 2."""


def _message(item: str, text: str) -> dict[str, Any]:
    content = [{"type": "output_text", "text": text, "annotations": []}]
    return {"type": "message", "id": item, "status": "completed", "role": "assistant", "content": content}


RESPONSE = {
    "id": "resp_1",
    "object": "response",
    "created_at": 1,
    "model": "m",
    "status": "completed",
    "output": [_message("m1", "part one. "), _message("m2", "part two.")],
    "usage": {"input_tokens": 5, "output_tokens": 4, "total_tokens": 9},
}


def _response_events(response: dict[str, Any]) -> str:
    """A Responses answer streamed: a delta per message, then the whole object."""
    deltas = [
        {"type": "response.output_text.delta", "item_id": item["id"], "output_index": index, "content_index": 0,
         "delta": item["content"][0]["text"]}
        for index, item in enumerate(response["output"])
    ]  # fmt: skip
    events = [*deltas, {"type": "response.completed", "response": response}]
    return "".join(
        f"event: {e['type']}\ndata: {json.dumps({**e, 'sequence_number': n})}\n\n" for n, e in enumerate(events)
    )


TWO = [LlmChoice(text="first idea", finish_reason="stop"), LlmChoice(text="second idea", finish_reason="length")]
PARTS = [
    LlmChoice(text="part one. ", finish_reason="completed"),
    LlmChoice(text="part two.", finish_reason="completed"),
]


async def _asked(client: openai.AsyncOpenAI) -> list[Any]:
    """What the agent reads of each answer: the chat choices (whole, then streamed) and the Responses messages."""
    whole = await client.chat.completions.create(model="m", messages=ASK, n=2)  # type: ignore[arg-type]
    streamed: dict[int, list[str]] = {}
    finished: dict[int, str] = {}
    async for chunk in await client.chat.completions.create(model="m", messages=ASK, n=2, stream=True):  # type: ignore[arg-type]
        for choice in chunk.choices:
            streamed.setdefault(choice.index, []).append(choice.delta.content or "")
            finished.update({choice.index: choice.finish_reason} if choice.finish_reason else {})
    response = await client.responses.create(model="m", input="Two parts, please.")
    pieces: dict[int, str] = {}
    async for event in await client.responses.create(model="m", input="Two parts, please.", stream=True):
        if event.type == "response.output_text.delta":
            pieces[event.output_index] = pieces.get(event.output_index, "") + event.delta
    return [
        [(c.message.content, c.finish_reason) for c in whole.choices],
        [("".join(streamed[i]), finished.get(i)) for i in sorted(streamed)],
        [item.content[0].text for item in response.output if item.type == "message"],  # type: ignore[union-attr]
        response.output_text,
        [pieces[i] for i in sorted(pieces)],
    ]


AS_GIVEN = [
    [("first idea", "stop"), ("second idea", "length")],
    [("first idea", "stop"), ("second idea", "length")],
    ["part one. ", "part two."],
    "part one. part two.",
    ["part one. ", "part two."],
]


async def test_every_choice_of_an_answer_is_recorded_and_served_back_as_it_was_given(
    scripted_llm: ScriptedLlm, store: EventStore
) -> None:
    scripted_llm.script(
        Garbage(body=CHAT), Garbage(body=STREAMED, content_type="text/event-stream"), Garbage(body=RESPONSE),
        Garbage(body=_response_events(RESPONSE), content_type="text/event-stream"),
    )  # fmt: skip
    run = await open_run(store, label="choices", agent="mine", model="m", tasks=TASKS)
    live = instrument(openai.AsyncOpenAI(base_url=scripted_llm.base_url, api_key="unused", max_retries=0))
    async with run.episode("T1") as episode:
        await episode.observe(url="http://shop.example/")
        assert await _asked(live) == AS_GIVEN
        await episode.end("answered", "done")
    await run.close()
    calls = [p for p in [s.decode_payload() async for s in store.read_stream(episode.stream)] if isinstance(p, LlmCall)]
    assert [(c.response, c.finish_reason, c.choices) for c in calls] == [
        ("first idea", "stop", TWO),  # judges and the viewer read the first choice, as before
        ("first idea", "stop", TWO),
        ("part one. part two.", "completed", PARTS),  # the Responses API's output_text
        ("part one. part two.", "completed", PARTS),
    ]
    replayed = served(openai.AsyncOpenAI(api_key="unused"), await RecordedCalls.of_stream(store, episode.stream))
    assert await _asked(replayed) == AS_GIVEN
    async with ReplayEndpoint() as endpoint:
        endpoint.episode = EpisodeReplay(await load_episode(store, episode.stream))
        agent = openai.AsyncOpenAI(base_url=f"{endpoint.url}/v1", api_key="unused", max_retries=0)
        assert await _asked(agent) == AS_GIVEN
        assert endpoint.episode.mismatch() is None
