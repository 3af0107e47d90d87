"""The LLM judges against the scripted OpenAI-compatible server: prompts, malformed replies, the cache, dry runs."""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest

from p2w_rt.replay.derived import PassAborted, PassSettings, run_pass
from p2w_rt.replay.judges import JUDGES, estimate_replay, judgment_stream, make_judge, read_judgments
from p2w_rt.schemas import LlmCall
from p2w_runtime.llm import RetryPolicy
from p2w_runtime.store import MemoryEventStore
from p2w_runtime.testing import Delay, Garbage, HttpError, Reply, ScriptedLlm, Text
from tests.helpers.builders import make_run
from tests.helpers.judge_replies import answer, fields
from tests.helpers.llm_clients import MadeClients


def user_text(request: dict[str, Any]) -> str:
    return next(m["content"] for m in request["messages"] if m["role"] == "user")


CLIENTS = MadeClients()


@pytest.fixture(autouse=True)
async def _closed_clients() -> AsyncIterator[None]:
    yield
    await CLIENTS.aclose()


def factory(server: ScriptedLlm, model: str = "gpt-5-mini") -> Any:
    return lambda: CLIENTS(model, base_url=server.base_url, api_key="sk-test", retry=RetryPolicy(max_retries=0))


async def count_events(store: Any, run_id: str) -> int:
    return len([e async for e in store.read_stream(judgment_stream(run_id))])


async def test_rubric_llm_judges_records_calls_and_caches(scripted_llm: ScriptedLlm) -> None:
    scripted_llm.handle_with(lambda request: answer(request))
    judge = make_judge("rubric-llm", PassSettings())
    async with MemoryEventStore() as store:
        run_id = await make_run(store)
        summary = await run_pass(JUDGES, store, run_id, [judge], llm=factory(scripted_llm))
        assert (summary.judged, summary.cached, summary.failed) == (2, 0, 0)
        requests = scripted_llm.chat_requests
        assert len(requests) == 2
        assert fields(requests[0]) == [
            "web_retrieval",
            "web_utilization",
            "pref_1_retrieval",
            "pref_1_utilization",
            "pref_2_retrieval",
            "pref_2_utilization",
            "intent",
        ]
        prompt = user_text(requests[0])
        for needle in ("MEMORY-ANSWER-TEXT", "PLANNER-REASONING-TEXT", "Expected website: kohls.com", "2. $70"):
            assert needle in prompt
        assert "role: judge" in requests[0]["messages"][0]["content"]

        records = await read_judgments(store, run_id)
        assert len(records) == 2
        j = records[0].judgment
        assert j.status == "ok" and j.judge_id == "rubric-llm" and j.points["pref.2.utilization"] == 2.5
        assert j.metrics == {"p_web": 1.0, "p_pref": 1.0, "p_avg": 1.0, "intent": 1.0, "success": 1.0}
        assert j.cost_usd is not None and j.cost_usd > 0
        first_event = [e async for e in store.read_stream(j.episode_stream)][1]  # E1 = the first timeline event
        assert j.evidence["intent"].event_ids == [first_event.event_id]
        calls = [e.decode().payload async for e in store.read_stream(judgment_stream(run_id)) if e.type == "llm.call"]
        assert len(calls) == 2 and all(isinstance(c, LlmCall) and c.role == "judge" for c in calls)
        assert "sk-test" not in json.dumps([c.model_dump() for c in calls])

        before = await count_events(store, run_id)
        again = await run_pass(JUDGES, store, run_id, [judge], llm=factory(scripted_llm))
        assert (again.judged, again.cached) == (0, 2)
        assert len(scripted_llm.chat_requests) == 2  # zero requests reached the server
        assert await count_events(store, run_id) == before

        forced = await run_pass(JUDGES, store, run_id, [judge], llm=factory(scripted_llm), force=True)
        assert forced.judged == 2 and len(scripted_llm.chat_requests) == 4
        assert len(await read_judgments(store, run_id)) == 4  # older judgments stay


async def test_intent_five_is_not_success(scripted_llm: ScriptedLlm) -> None:
    scripted_llm.handle_with(lambda request: answer(request, intent=5))
    async with MemoryEventStore() as store:
        run_id = await make_run(store, ("Alex_Garcia_A1",))
        summary = await run_pass(
            JUDGES, store, run_id, [make_judge("rubric-llm", PassSettings())], llm=factory(scripted_llm)
        )
        j = summary.outcomes[0].judgment
        assert j.metrics["intent"] == 0.5 and j.metrics["success"] == 0.0 and j.metrics["p_avg"] == 1.0


async def test_malformed_replies_are_repaired_then_recorded_as_failed(scripted_llm: ScriptedLlm) -> None:
    # episode 1: prose, then a wrong score, then a valid answer -> ok after two repairs
    # episode 2: three malformed answers -> failed judgment, the batch goes on
    scripted_llm.script(
        "I think the agent did well.",
        lambda r: answer(r).replace('"score": 10', '"score": 7'),
        lambda r: answer(r),
        "nope",
        "{}",
        "still not json",
    )
    judge = make_judge("rubric-llm", PassSettings())
    async with MemoryEventStore() as store:
        run_id = await make_run(store)
        summary = await run_pass(JUDGES, store, run_id, [judge], llm=factory(scripted_llm), concurrency=1)
        by_task = {o.task_id: o.judgment for o in summary.outcomes}
        assert by_task["Alex_Garcia_A1"].status == "ok"
        failed = by_task["Alex_Garcia_B1"]
        assert failed.status == "failed" and "no valid RubricJudgment" in (failed.error or "")
        assert (summary.judged, summary.failed) == (2, 1)  # judged: made by the pass, the failed one included
        calls = [e.decode().payload async for e in store.read_stream(judgment_stream(run_id)) if e.type == "llm.call"]
        assert sum(1 for c in calls if c.error) == 5  # every bad attempt is on record

        asked = len(scripted_llm.chat_requests)
        again = await run_pass(JUDGES, store, run_id, [judge], llm=factory(scripted_llm))
        assert (again.cached, again.failed, again.judged) == (2, 1, 0)  # the cached failure is reported, not paid again
        assert len(scripted_llm.chat_requests) == asked

        scripted_llm.script(Garbage.without_choices())  # a body that is no completion at all: failed again
        retry = await run_pass(JUDGES, store, run_id, [judge], llm=factory(scripted_llm), retry_failed=True)
        assert (retry.cached, retry.judged, retry.failed) == (1, 1, 1)  # --retry-failed judged the failed one again
        assert "no choices" in (retry.outcomes[1].judgment.error or "")

        scripted_llm.handle_with(lambda request: answer(request))
        last = await run_pass(JUDGES, store, run_id, [judge], llm=factory(scripted_llm), retry_failed=True)
        assert (last.cached, last.judged, last.failed) == (1, 1, 0)


async def test_endpoint_down_stops_the_batch_and_keeps_what_was_done(scripted_llm: ScriptedLlm) -> None:
    scripted_llm.script(lambda r: answer(r), HttpError(503, "overloaded"))
    judge = make_judge("rubric-llm", PassSettings())
    async with MemoryEventStore() as store:
        run_id = await make_run(store)
        with pytest.raises(PassAborted, match="503"):
            await run_pass(JUDGES, store, run_id, [judge], llm=factory(scripted_llm), concurrency=1)
        records = await read_judgments(store, run_id)
        assert [r.judgment.status for r in records] == ["ok"]


async def test_an_episode_too_long_for_the_model_fails_alone(scripted_llm: ScriptedLlm) -> None:
    """A 400 for a prompt over the model's context is this episode's failure, not the endpoint's: the pass goes on."""
    too_long = HttpError(400, "This model's maximum context length is 8192 tokens. However, you requested 9000.")
    scripted_llm.script(too_long)  # the first episode's request; the others are answered
    scripted_llm.handle_with(answer)
    judge = make_judge("rubric-llm", PassSettings())
    async with MemoryEventStore() as store:
        run_id = await make_run(store, ("Alex_Garcia_A1", "Alex_Garcia_B1", "Alex_Garcia_C1"))
        summary = await run_pass(JUDGES, store, run_id, [judge], llm=factory(scripted_llm), concurrency=1)
    assert (summary.judged, summary.failed) == (3, 1)
    assert [error for error in summary.failures] == [
        f"LLM endpoint {scripted_llm.base_url} rejected the judge request for model gpt-5-mini: HTTP 400: "
        f"{too_long.message}"
    ]


async def test_a_pass_stopped_by_one_episode_keeps_the_calls_the_others_paid_for(scripted_llm: ScriptedLlm) -> None:
    """The first episode's answer is malformed (tokens spent) and its repair is slow; the second episode's key is
    refused, which stops the pass before the fourth and cancels the first: its paid answer is still recorded."""
    first = threading.Lock()

    def reply(request: dict[str, Any]) -> Reply:
        if "Your answer was not valid" in json.dumps(request):
            return Delay(30, Text("late"))
        return Text("no JSON here") if first.acquire(blocking=False) else Delay(0.5, HttpError(401, "key revoked"))

    scripted_llm.handle_with(reply)
    judge = make_judge("rubric-llm", PassSettings())
    async with MemoryEventStore() as store:
        run_id = await make_run(store, tuple(f"Alex_Garcia_A{n}" for n in range(1, 5)))
        with pytest.raises(PassAborted, match="401"):
            await run_pass(JUDGES, store, run_id, [judge], llm=factory(scripted_llm), concurrency=2)
        events = [e.decode().payload async for e in store.read_stream(judgment_stream(run_id))]
    calls = [c.response or c.error for c in events if isinstance(c, LlmCall)]
    assert sorted(map(str, calls)) == ["HTTP 401: key revoked", "no JSON here"]


async def test_baseline_views_hide_what_they_must_not_see(scripted_llm: ScriptedLlm) -> None:
    scripted_llm.handle_with(lambda request: answer(request))
    async with MemoryEventStore() as store:
        run_id = await make_run(store, ("Alex_Garcia_A1",))
        judges = [make_judge(j, PassSettings()) for j in ("action-wise", "outcome-based")]
        await run_pass(JUDGES, store, run_id, judges, llm=factory(scripted_llm), concurrency=1)
    action_wise, outcome = (user_text(r) for r in scripted_llm.chat_requests)
    assert "type [3] [chinos 32x32] [1]" in action_wise and "stop [Chinos 32x32 for $59]" in action_wise
    assert "MEMORY-ANSWER-TEXT" not in action_wise and "PLANNER-REASONING-TEXT" not in action_wise
    assert "FINAL-REASONING-TEXT" in outcome and "stop [Chinos 32x32 for $59]" in outcome
    assert "type [3]" not in outcome and "PLANNER-REASONING-TEXT" not in outcome
    assert fields(scripted_llm.chat_requests[0]) == [
        "web_utilization",
        "pref_1_utilization",
        "pref_2_utilization",
        "intent",
    ]


async def test_dry_run_estimates_without_calling(scripted_llm: ScriptedLlm) -> None:
    scripted_llm.handle_with(lambda request: answer(request))
    judges = [make_judge(j, PassSettings()) for j in ("rubric-llm", "rubric-rules")]
    async with MemoryEventStore() as store:
        run_id = await make_run(store)
        llm_est, rules_est = await estimate_replay(store, run_id, judges, model="gpt-5-mini")
        assert (llm_est.episodes, llm_est.calls, llm_est.cached) == (2, 2, 0)
        assert llm_est.prompt_tokens > 200 and llm_est.cost_usd is not None and llm_est.cost_usd > 0
        assert (rules_est.calls, rules_est.cost_usd) == (0, 0.0)
        assert scripted_llm.chat_requests == [] and await count_events(store, run_id) == 0
        await run_pass(JUDGES, store, run_id, judges[:1], llm=factory(scripted_llm))
        after, _ = await estimate_replay(store, run_id, judges, model="gpt-5-mini")
        assert (after.calls, after.cached) == (0, 2)
        unknown, _ = await estimate_replay(store, run_id, judges, model="my-local-model", force=True)
        assert unknown.calls == 2 and unknown.cost_usd is None
