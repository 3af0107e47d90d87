"""The public recording API (p2w_runtime.recording): another agent's episodes, its model calls, crash and resume."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import openai
import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.schemas import LlmCall, MemoryEntry, ParsedAction, RetrievalHit
from p2w_runtime.data import load_tasks
from p2w_runtime.demo.sample import sample_tasks_dir
from p2w_runtime.domain import counted, episodes_of, list_runs
from p2w_runtime.errors import UserError
from p2w_runtime.llm import LlmClient, fingerprint
from p2w_runtime.recording import EpisodeGrammarError, RecordedCalls, instrument, open_run, served
from p2w_runtime.store import EventStore, open_store
from p2w_runtime.testing import HttpError, ScriptedLlm, Text
from tests.helpers.paths import HELPERS, REPO
from tests.helpers.recording_tasks import TASKS

KEY = "sk-live-RECORDING-9f8e7d6c5b4a3210"
ASK = [{"role": "user", "content": "What should I search for?"}]


async def payloads(store: EventStore, stream: str) -> list:
    return [stored.decode_payload() async for stored in store.read_stream(stream)]


def calls_of(events: list) -> list[LlmCall]:
    return [p for p in events if isinstance(p, LlmCall)]


async def test_an_episode_reads_back_in_grammar_order_with_its_calls_keyed_like_the_own_client(
    scripted_llm: ScriptedLlm, store: EventStore
) -> None:
    scripted_llm.script(Text("penne"), Text("penne"), Text("penne"))
    llm = instrument(openai.AsyncOpenAI(base_url=scripted_llm.base_url, api_key=KEY))
    run = await open_run(store, label="api", agent="mine", model="scripted-model", tasks=TASKS)
    async with run.episode("T1") as episode:
        assert await episode.observe(url="http://shop.example/", title="Shop", ax_tree="search box") == 1
        for _ in range(2):
            await llm.chat.completions.create(model="scripted-model", messages=ASK, temperature=0)
        await episode.rationale("search first")
        await episode.action("type [1] [penne]", ParsedAction(name="type", args=["1", "penne"]))
        await episode.final_state(url="http://shop.example/?q=penne", dom_html="<p>penne</p>")
        await episode.end("answered", "penne")
    finished = await run.close()
    events = await payloads(store, episode.stream)
    assert [p.type for p in events] == [
        "episode.started",
        "observation",
        "llm.call",
        "llm.call",
        "rationale",
        "action",
        "final_state",
        "episode.finished",
    ]
    own: list[LlmCall] = []

    async def sink(call: LlmCall) -> None:
        own.append(call)

    async with LlmClient("scripted-model", base_url=scripted_llm.base_url, sink=sink) as client:
        await client.complete("planner", ASK, params={"temperature": 0}, step=1)
    recorded = calls_of(events)
    assert [c.fingerprint for c in recorded] == [own[0].fingerprint] * 2
    assert [c.ordinal for c in recorded] == [0, 1]
    assert [(c.step, c.role, c.response) for c in recorded] == [(1, "planner", "penne")] * 2
    assert finished.episodes == 1 and finished.status == "completed"
    assert [t.task_id for t in run.todo()] == ["T2"]


async def test_streamed_and_responses_calls_are_recorded_from_sync_and_async_clients(
    scripted_llm: ScriptedLlm, store: EventStore
) -> None:
    scripted_llm.script(Text("async stream"), Text("sync stream"), Text("async response"), Text("sync response"))
    aclient = instrument(openai.AsyncOpenAI(base_url=scripted_llm.base_url, api_key=KEY))
    client = instrument(openai.OpenAI(base_url=scripted_llm.base_url, api_key=KEY))
    run = await open_run(store, label="streams", agent="mine", model="scripted-model", tasks=TASKS)
    got: list[str] = []
    async with run.episode("T1") as episode:
        await episode.observe(url="http://shop.example/")
        stream = await aclient.chat.completions.create(model="scripted-model", messages=ASK, stream=True)
        got.append("".join([c.choices[0].delta.content or "" async for c in stream if c.choices]))

        def sync_stream() -> str:
            chunks = client.chat.completions.create(model="scripted-model", messages=ASK, stream=True)
            return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)

        got.append(await asyncio.to_thread(sync_stream))
        response = await aclient.responses.create(model="scripted-model", instructions="Be brief.", input="Hi")
        got.append(response.output_text)

        def sync_response_stream() -> str:
            events = client.responses.create(model="scripted-model", input="Hi", stream=True)
            return "".join(e.delta for e in events if e.type == "response.output_text.delta")

        got.append(await asyncio.to_thread(sync_response_stream))
        await episode.action("stop [done]")
        await episode.end("answered", "done")
    assert got == ["async stream", "sync stream", "async response", "sync response"]
    recorded = calls_of(await payloads(store, episode.stream))
    assert [c.response for c in recorded] == got
    chat = fingerprint("scripted-model", ASK, {})
    assert [c.fingerprint for c in recorded[:2]] == [chat, chat]  # streaming is transport, not identity
    assert [c.ordinal for c in recorded[:2]] == [0, 1]
    assert recorded[2].messages == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    assert all(c.usage is not None and c.usage.total_tokens > 0 for c in recorded)


async def test_sdk_retries_are_attempts_of_one_call_and_concurrent_episodes_get_their_own_calls(
    scripted_llm: ScriptedLlm, store: EventStore
) -> None:
    scripted_llm.rule("retry me", HttpError(503, "busy"), times=1)
    scripted_llm.handle_with(lambda request: Text(f"answer to {request['messages'][-1]['content']}"))
    llm = instrument(openai.AsyncOpenAI(base_url=scripted_llm.base_url, api_key=KEY, max_retries=2))
    run = await open_run(store, label="attempts", agent="mine", model="m", tasks=TASKS)

    async def one(task_id: str) -> str:
        async with run.episode(task_id) as episode:
            await episode.observe(url=f"http://shop.example/{task_id}")
            await asyncio.sleep(0)  # the other episode runs in between
            await llm.chat.completions.create(model="m", messages=[{"role": "user", "content": f"{task_id} retry me"}])
            await episode.action("stop [done]")
            await episode.end("answered", "done")
            return episode.stream

    streams = await asyncio.gather(one("T1"), one("T2"))
    by_stream = {stream: calls_of(await payloads(store, stream)) for stream in streams}
    retried = [calls for calls in by_stream.values() if len(calls) == 2]
    (calls,) = retried  # the one 503 fell to one episode, whose call has two attempts
    assert [(c.ordinal, c.attempt, c.error is None) for c in calls] == [(0, 1, False), (0, 2, True)]
    for stream, recorded in by_stream.items():
        task_id = stream.rsplit("/", 1)[1]
        assert {c.messages[-1]["content"] for c in recorded} == {f"{task_id} retry me"}
        assert recorded[-1].response == f"answer to {task_id} retry me"


async def test_the_api_key_is_never_stored_even_when_the_endpoint_echoes_it(
    scripted_llm: ScriptedLlm, tmp_path: Path
) -> None:
    scripted_llm.script(HttpError(400, f"invalid request for key {KEY}"))
    llm = instrument(openai.AsyncOpenAI(base_url=scripted_llm.base_url, api_key=KEY, max_retries=0))
    db = tmp_path / "keys.db"
    async with open_store(db) as store:
        run = await open_run(store, label="keys", agent="mine", model="scripted-model", tasks=TASKS)
        async with run.episode("T1") as episode:
            await episode.observe(url="http://shop.example/")
            with pytest.raises(openai.BadRequestError):
                await llm.chat.completions.create(model="scripted-model", messages=ASK)
            await episode.end("error", detail="the model refused")
        await run.close()
        (call,) = calls_of(await payloads(store, episode.stream))
    assert call.error is not None and "***" in call.error and KEY not in call.error
    assert scripted_llm.requests[-1].headers["Authorization"] == f"Bearer {KEY}"  # it was sent, not kept
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert KEY.encode() not in stored


async def test_calls_are_served_back_from_the_recording_in_the_format_asked(
    scripted_llm: ScriptedLlm, store: EventStore
) -> None:
    scripted_llm.script(Text("penne"), Text("rice"))
    llm = instrument(openai.AsyncOpenAI(base_url=scripted_llm.base_url, api_key=KEY))
    run = await open_run(store, label="serve", agent="mine", model="scripted-model", tasks=TASKS)
    async with run.episode("T1") as episode:
        await episode.observe(url="http://shop.example/")
        await llm.chat.completions.create(model="scripted-model", messages=ASK)
        await llm.responses.create(model="scripted-model", input="And then?")
        await episode.action("stop [done]")
        await episode.end("answered", "done")
    await run.close()
    asked = len(scripted_llm.requests)
    again = served(openai.AsyncOpenAI(api_key="unused"), await RecordedCalls.of_task(store, "serve", "T1"))
    stream = await again.chat.completions.create(model="scripted-model", messages=ASK, stream=True)
    assert "".join([c.choices[0].delta.content or "" async for c in stream if c.choices]) == "penne"
    assert (await again.responses.create(model="scripted-model", input="And then?")).output_text == "rice"
    with pytest.raises(openai.BadRequestError, match="no recorded call has fingerprint"):
        await again.chat.completions.create(model="scripted-model", messages=ASK)
    assert len(scripted_llm.requests) == asked  # nothing left the process
    with pytest.raises(UserError, match="no counted episode of task 'T2'"):
        await RecordedCalls.of_task(store, "serve", "T2")


async def test_a_run_on_a_persona2web_task_set_states_its_dataset_and_records_its_task_files(store: EventStore) -> None:
    tasks = load_tasks(sample_tasks_dir())
    run = await open_run(store, label="sample", agent="mine", model="m", tasks=tasks)
    (info,) = await list_runs(store)
    assert (info.started.dataset_id, info.started.dataset_hash) == (tasks.dataset_id, tasks.content_hash)
    assert [t.task_id for t in run.todo()] == [t.task_id for t in tasks]
    async with run.episode("Lena_Fischer_A1") as episode:
        await episode.observe(url="http://search.p2w.test/")
        await episode.end("no_answer")
    started = (await payloads(store, episode.stream))[0]
    assert (started.source_file, started.ground_truth) == (
        "Lena_Fischer_A1.json",
        tasks.get("Lena_Fischer_A1").ground_truth,
    )


async def test_a_sync_client_called_on_the_loop_thread_is_recorded_and_served_back(
    scripted_llm: ScriptedLlm, store: EventStore
) -> None:
    scripted_llm.script(Text("blocking answer"))
    llm = instrument(openai.OpenAI(base_url=scripted_llm.base_url, api_key=KEY))
    run = await open_run(store, label="blocking", agent="mine", model="m", tasks=TASKS)
    async with run.episode("T1") as episode:
        await episode.observe(url="http://shop.example/")
        said = llm.chat.completions.create(model="m", messages=ASK)  # blocks the loop, as careless agents do
        await episode.action("stop [done]")
        await episode.end("answered", "done")
    assert said.choices[0].message.content == "blocking answer"
    (call,) = calls_of(await payloads(store, episode.stream))
    assert (call.step, call.response) == (1, "blocking answer")
    again = served(openai.OpenAI(api_key="unused"), await RecordedCalls.of_task(store, "blocking", "T1"))
    assert again.chat.completions.create(model="m", messages=ASK).choices[0].message.content == "blocking answer"


async def test_the_grammar_refuses_out_of_order_events_with_its_error(store: EventStore) -> None:
    run = await open_run(store, label="grammar", agent="mine", model="m", tasks=TASKS)
    async with run.episode("T1") as episode:
        await episode.observe(url="http://shop.example/")
        with pytest.raises(UserError, match="needs a history retrieval"):
            await episode.memory_answer("she is vegan")
        await episode.final_state(url="http://shop.example/")
        staged = list(episode.writer.events)
        with pytest.raises(EpisodeGrammarError, match="only episode.finished may follow final_state"):
            await episode.action("click [1]")
        assert episode.writer.events == staged  # nothing of the refused event was staged
        await episode.end("answered", "ok")
        with pytest.raises(EpisodeGrammarError, match="the episode has finished"):
            await episode.observe(url="http://shop.example/")
    with pytest.raises(UserError, match="not one of its 2 tasks"):
        run.episode("T9")


async def test_a_model_call_the_grammar_refuses_fails_at_once_with_the_grammar_error(
    scripted_llm: ScriptedLlm, store: EventStore
) -> None:
    llm = instrument(openai.AsyncOpenAI(base_url=scripted_llm.base_url, api_key=KEY))
    run = await open_run(store, label="late", agent="mine", model="m", tasks=TASKS)
    async with run.episode("T1") as episode:
        await episode.observe(url="http://shop.example/")
        await episode.final_state(url="http://shop.example/")
        with pytest.raises(openai.BadRequestError, match="only episode.finished may follow final_state"):
            await llm.chat.completions.create(model="m", messages=ASK)
        await episode.end("answered", "ok")
    assert scripted_llm.requests == []  # refused before it was sent, and not retried
    assert [p.type for p in await payloads(store, episode.stream)][-2:] == ["final_state", "episode.finished"]


async def test_the_agents_own_retrieval_is_recorded_as_a_query_its_hits_and_the_answer_drawn(store: EventStore) -> None:
    entry = MemoryEntry(timestamp="2025-01-02", type="purchase", object="gluten-free penne", website="basket.p2w.test")
    hit = RetrievalHit(entry_id=7, rank=1, score=0.81, entry=entry)
    run = await open_run(store, label="own-retriever", agent="mine", model="m", tasks=TASKS, scheme="on-demand")
    async with run.episode("T1") as episode:
        await episode.observe(url="http://shop.example/")
        await episode.action("memory [my diet]")
        await episode.history("my diet", [hit], model_id="my-embedder", index_hash="f" * 64, k=5, threshold=0.3)
        await episode.memory_answer("She eats gluten-free.", [7])
        await episode.end("answered", "penne")
    stored = [s async for s in store.read_stream(episode.stream)]
    query, retrieval, answer = stored[3], stored[4], stored[5]
    assert (query.type, retrieval.type, answer.type) == ("history.query", "history.retrieval", "rationale")
    assert retrieval.causation_id == query.event_id and answer.causation_id == retrieval.event_id
    assert retrieval.decode_payload().hits == [hit]
    assert answer.decode_payload().cited_entry_ids == [7]


async def test_an_agent_error_inside_the_episode_ends_it_as_an_error(store: EventStore) -> None:
    run = await open_run(store, label="raises", agent="mine", model="m", tasks=TASKS)
    with pytest.raises(RuntimeError):
        async with run.episode("T1") as episode:
            await episode.observe(url="http://shop.example/")
            raise RuntimeError("the agent broke")
    finished = (await payloads(store, episode.stream))[-1]
    assert (finished.end_reason, finished.detail) == ("error", "RuntimeError: the agent broke")


async def test_recorders_joining_one_run_share_it_and_close_nothing_of_each_other(store: EventStore) -> None:
    """``join=True`` (``record --exec --worker``): two recorders opening the label at once get one run; a third joins
    while an episode is open and leaves it open; an attempt number given by the caller names the stream; another
    model is refused."""
    first, second = await asyncio.gather(
        *(open_run(store, label="shared", agent="mine", model="m", tasks=TASKS, join=True) for _ in range(2))
    )
    assert first.run_id == second.run_id and len(await list_runs(store)) == 1
    async with first.episode("T1") as open_one:
        await open_one.observe(url="http://shop.example/")
        third = await open_run(store, label="shared", agent="mine", model="m", tasks=TASKS, join=True)
        assert third.run_id == first.run_id
        (attempt,) = await episodes_of(store, first.run_id, every_attempt=True)
        assert attempt.end_reason is None  # still being recorded: a joiner closes nothing
        async with third.episode("T2", attempt=3) as numbered:
            await numbered.end("no_answer")
        await open_one.end("answered", "rice")
    assert numbered.stream.endswith("/T2#3")
    attempts = await episodes_of(store, first.run_id, every_attempt=True)
    assert sorted((a.episode_id, a.end_reason) for a in attempts) == [("T1", "answered"), ("T2#3", "no_answer")]
    with pytest.raises(UserError, match="model 'other' \\(recorded: 'm'\\)"):
        await open_run(store, label="shared", agent="mine", model="other", tasks=TASKS, join=True)


@pytest.mark.slow
async def test_a_killed_recorder_leaves_a_run_that_refuses_a_plain_reopen_and_resumes(tmp_path: Path) -> None:
    db = tmp_path / "killed.db"
    child = subprocess.Popen(
        [sys.executable, str(HELPERS / "recording_child.py"), str(db), "killed"],
        stdout=subprocess.PIPE,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == b"READY"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    async with open_store(db) as store:
        (info,) = await list_runs(store)
        assert (info.status, info.episodes, info.attempts) == ("unfinished", 1, 2)
        with pytest.raises(
            UserError, match=r"'killed' already exists \(unfinished, 1 of 2 tasks counted\).*resume=True"
        ):
            await open_run(store, label="killed", agent="child", model="m", tasks=TASKS)
        with pytest.raises(UserError, match="model 'other' \\(recorded: 'm'\\)"):
            await open_run(store, label="killed", agent="child", model="other", tasks=TASKS, resume=True)
        run = await open_run(store, label="killed", agent="child", model="m", tasks=TASKS, resume=True)
        assert [t.task_id for t in run.todo()] == ["T2"]
        async with run, run.episode("T2") as episode:
            await episode.observe(url="http://shop.example/")
            await episode.action("stop [rice]")
            await episode.end("answered", "rice")
        attempts = await episodes_of(store, info.run_id, every_attempt=True)
    assert [(a.episode_id, a.end_reason) for a in attempts] == [
        ("T1", "answered"),
        ("T2", "aborted"),
        ("T2#2", "answered"),
    ]
    assert [a.episode_id for a in counted(attempts)] == ["T1", "T2#2"]
    verified = await asyncio.to_thread(CliRunner().invoke, main, ["--db", str(db), "verify", "killed"])
    assert verified.exit_code == 0, verified.output
    assert "0 events not covered by a seal" in verified.output


@pytest.mark.slow
def test_the_example_agent_records_a_run_that_shows_judges_and_verifies(tmp_path: Path) -> None:
    db = tmp_path / "example.db"
    example = REPO / "examples" / "record_playwright_agent.py"
    done = subprocess.run(
        [sys.executable, str(example), "--db", str(db), "--label", "example"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    cli = CliRunner()
    shown = cli.invoke(main, ["--db", str(db), "show", "example", "Lena_Fischer_A1", "--json"])
    assert shown.exit_code == 0, shown.output
    events = [json.loads(line)["payload"] for line in shown.output.splitlines()]
    types = [e["type"] for e in events]
    assert types[0] == "episode.started" and types[-2:] == ["final_state", "episode.finished"]
    assert {"observation", "llm.call", "history.query", "history.retrieval", "rationale", "action"} <= set(types)
    assert events[-1]["end_reason"] == "answered"
    final = next(e for e in events if e["type"] == "final_state")
    assert final["url"].startswith("http://basket.p2w.test/cart")
    acted = {e["parsed"]["name"]: e for e in events if e["type"] == "action"}
    assert acted["add_to_cart"]["status"] == "executed" and acted["add_to_cart"]["duration_s"] is not None
    assert acted["memory"]["duration_s"] is None  # recorded as asked; its work is the history query
    judged = cli.invoke(main, ["--db", str(db), "replay", "example", "--judge", "rubric-rules"])
    assert judged.exit_code == 0, judged.output
    assert "Lena_Fischer_A1  rubric-rules" in judged.output and "intent=1.000" in judged.output
    verified = cli.invoke(main, ["--db", str(db), "verify", "example"])
    assert verified.exit_code == 0, verified.output
    assert "0 events not covered by a seal" in verified.output
