"""The viewer's run page over HTTP: each episode's time, tokens and cost, and the state a recording run's page polls
(live until it finishes, episodes in flight with their steps and tokens so far)."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from p2w_rt.schemas import LlmCall, LlmUsage
from p2w_runtime.llm import PriceTable
from p2w_runtime.recording import open_run
from p2w_runtime.store import open_store
from tests.helpers.raw_sqlite import raw_sqlite
from tests.helpers.recording_tasks import TASKS, Sketch
from tests.helpers.stored_support import run_of_label, stored_events
from tests.helpers.view_app import get_html, get_json, serving_app
from tests.helpers.view_support import event_count, fetch

pytestmark = pytest.mark.slow


# -- time, tokens and cost ---------------------------------------------------------------------------------------


def _call(
    model: str, prompt: int, completion: int, *, cost: float | None = None, step: int = 1, answered: bool = True
) -> LlmCall:
    usage = LlmUsage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion)
    return LlmCall(
        role="planner",
        model=model,
        step=step,
        messages=[{"role": "user", "content": "next?"}],
        response="click [1]" if answered else None,
        error=None if answered else "HTTP 503",
        usage=usage if answered else None,
        latency_s=0.25,
        fingerprint=f"{model}-{prompt}",
        ordinal=0,
        cost_usd=cost,
    )


async def _record_priced_run(db: Path) -> None:
    """T1: a call the recorder priced, one priced only by the table, one of a model without a price, one failed
    attempt. T2: one table-priced call."""
    async with open_store(db) as store:
        run = await open_run(store, label="priced", agent="mine", model="gpt-4o-mini", tasks=TASKS)
        async with run.episode("T1") as episode:
            await episode.observe(url="http://shop.example/", title="Shop")
            episode.record_call(_call("gpt-4o", 1000, 100, cost=0.5))
            episode.record_call(_call("gpt-4o-mini", 2000, 200))
            episode.record_call(_call("my-local-model", 300, 30))
            episode.record_call(_call("gpt-4o-mini", 0, 0, answered=False))
            await episode.action("click [1]")
            await episode.end("answered", "penne")
        async with run.episode("T2") as episode:
            await episode.observe(url="http://shop.example/", title="Shop")
            episode.record_call(_call("gpt-4o-mini", 4000, 400))
            await episode.action("click [1]")
            await episode.end("answered", "rice")
        await run.close()


def _recorded_seconds(db: Path, task: str) -> float:
    with raw_sqlite(db) as conn:
        start, end = (
            datetime.fromisoformat(
                conn.execute(
                    "SELECT recorded_at FROM events WHERE type = ? AND stream LIKE ?", (kind, f"%/{task}")
                ).fetchone()[0]
            )
            for kind in ("episode.started", "episode.finished")
        )
    return (end - start).total_seconds()


def test_usage_sums_each_episodes_calls_and_prices_unpriced_ones_by_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "priced.db"
    asyncio.run(_record_priced_run(db))
    mini = PriceTable.builtin().price("gpt-4o-mini")
    assert mini is not None
    monkeypatch.delenv("P2W_PRICES", raising=False)
    with serving_app(db) as (url, _):
        status, usage = get_json(url + "api/run/priced/usage")
        assert status == 200
        t1, t2 = usage["episodes"]
        assert (t1["task_id"], t2["task_id"]) == ("T1", "T2") and (t1["index"], t2["index"]) == (0, 1)
        table_t1 = 2000 / 1000 * mini.input_per_1k + 200 / 1000 * mini.output_per_1k
        u = t1["usage"]
        assert (u["calls"], u["attempts"], u["unpriced_calls"], u["table_priced_calls"]) == (3, 4, 1, 1)
        assert (u["prompt_tokens"], u["completion_tokens"], u["tokens"]) == (3300, 330, 3630)
        assert u["cost_usd"] == pytest.approx(0.5 + table_t1), "the recorded cost as is, the table's for the rest"
        assert u["llm_seconds"] == pytest.approx(1.0)
        assert t1["seconds"] == pytest.approx(_recorded_seconds(db, "T1"), abs=1e-6) and t1["steps"] == 1
        table_t2 = 4000 / 1000 * mini.input_per_1k + 400 / 1000 * mini.output_per_1k
        assert t2["usage"]["cost_usd"] == pytest.approx(table_t2)
        summary = usage["summary"]
        assert summary["episodes"]["tokens"] == 3630 + 4400 and summary["unpriced_models"] == ["my-local-model"]
        assert summary["episodes"]["cost_usd"] == pytest.approx(0.5 + table_t1 + table_t2)
        assert summary["seconds"] == pytest.approx(t1["seconds"] + t2["seconds"])

        _, page = get_json(url + "api/run/priced")
        assert page["usage"] == summary and [x["task_id"] for x in page["shown_usage"]] == ["T1", "T2"]
        html = get_html(url + "run/priced")
        assert "3,630" in html and f"${0.5 + table_t1:.4f}" in html and "4,400" in html
        assert "no price for my-local-model: 1 calls unpriced" in html.replace("No recorded cost and no", "no")
        _, by_cost = get_json(url + "api/run/priced?sort=cost&order=desc")
        assert [e["ref"]["task_id"] for e in by_cost["shown"]] == ["T1", "T2"]
        _, by_tokens = get_json(url + "api/run/priced?sort=tokens")
        assert [e["ref"]["task_id"] for e in by_tokens["shown"]] == ["T1", "T2"]
        status, headers, png = fetch(url + "run/priced/plot/usage.png")
        assert status == 200 and png.startswith(b"\x89PNG") and headers["content-type"] == "image/png"

    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"my-local-model": {"input_per_1k": 1.0, "output_per_1k": 10.0}}))
    monkeypatch.setenv("P2W_PRICES", str(prices))
    with serving_app(db) as (url, _):
        _, usage = get_json(url + "api/run/priced/usage")
        u = usage["episodes"][0]["usage"]
        assert u["unpriced_calls"] == 0 and u["table_priced_calls"] == 2 and usage["summary"]["unpriced_models"] == []
        assert u["cost_usd"] == pytest.approx(0.5 + table_t1 + 0.3 + 0.3), "a price file prices the rest"


def test_the_demos_usage_matches_its_recorded_calls(demo: Path, demo_url: str) -> None:
    _, usage = get_json(demo_url + "api/run/earlier/usage")
    calls = stored_events(demo, prefix=f"{run_of_label(demo, 'earlier')}/", types=["llm.call"])
    tokens = (sum((e.payload.get("usage") or {}).get("total_tokens") or 0 for e in calls), len(calls))
    assert usage["summary"]["episodes"]["tokens"] == tokens[0] and usage["summary"]["episodes"]["attempts"] == tokens[1]
    assert len(usage["episodes"]) == 24 and [e["index"] for e in usage["episodes"]] == list(range(24))
    assert sum(e["usage"]["tokens"] for e in usage["episodes"]) == tokens[0]


# -- a run being recorded ---------------------------------------------------------------------------------------


def test_a_recording_run_is_live_until_it_finishes_and_browsing_appends_nothing(tmp_path: Path) -> None:
    db = tmp_path / "live.db"
    tasks = [Sketch(f"T{i}", f"task {i}") for i in range(1, 4)]

    async def record(task: str, *, close: bool = False) -> None:
        async with open_store(db) as store:
            run = await open_run(store, label="live", agent="mine", model="m", tasks=tasks, resume=True)
            async with run.episode(task) as episode:
                await episode.observe(url="http://shop.example/", title="Shop")
                episode.record_call(_call("gpt-4o-mini", 100 * int(task[1:]), 10))
                await episode.action("stop [done]")
                await episode.end("answered", task)
            if close:
                await run.close()

    async def start() -> None:
        async with open_store(db) as store:
            await open_run(store, label="live", agent="mine", model="m", tasks=tasks)

    def fresh_usage() -> Any:
        with serving_app(db) as (other, _):
            return get_json(other + "api/run/live/usage")[1]

    asyncio.run(start())
    asyncio.run(record("T1"))
    with serving_app(db) as (url, _):
        _, live = get_json(url + "api/run/live/live")
        assert live["recording"] is True and live["status"] == "recording" and live["episodes"] == 1
        html = get_html(url + "run/live")
        assert f'data-token="{live["token"]}"' in html and 'data-poll="/api/run/' in html
        listing = get_html(url)
        assert '<span class="status status-recording"' in listing
        _, runs_live = get_json(url + "api/runs/live")
        assert runs_live["recording"] == [live["run_id"]]
        assert f"{live['run_id']}:1.1.recording " in runs_live["token"] + " ", "the list's token leaves the end out"
        assert live["token"].startswith("1.1.recording."), "a recording run's page token moves with the log's end"
        assert f'data-token="{runs_live["token"]}"' in listing and 'data-poll="/api/runs/live"' in listing
        before = event_count(db)
        for path in (
            "api/runs/live",
            "api/run/live/live",
            "run/live?sort=failures",
            "api/run/live/usage",
            "search?q=T1",
            "api/search?q=t",
        ):
            assert fetch(url + path)[0] == 200, path
        assert event_count(db) == before, "the viewer never appends"
        asyncio.run(record("T2"))
        _, moved = get_json(url + "api/run/live/live")
        assert moved["token"] != live["token"] and moved["episodes"] == 2 and moved["recording"]
        _, caught_up = get_json(url + "api/run/live/usage")
        assert caught_up == fresh_usage(), "the scan that read only the new events agrees with a whole read"
        assert [e["usage"]["prompt_tokens"] for e in caught_up["episodes"]] == [100, 200]
        asyncio.run(record("T3", close=True))
        _, done = get_json(url + "api/run/live/live")
        assert done["recording"] is False and done["status"] == "completed" and done["episodes"] == 3
        html = get_html(url + "run/live")
        assert 'id="live"' not in html and "data-poll" not in html and ">completed</span>" in html
        assert get_json(url + "api/runs/live")[1]["recording"] == [] and "data-poll" not in get_html(url)
        assert get_json(url + "api/run/live/usage")[1]["summary"]["episodes"]["prompt_tokens"] == 600


async def test_an_episode_in_flight_is_listed_with_its_steps_and_tokens_so_far(tmp_path: Path) -> None:
    db = tmp_path / "flying.db"
    tasks = [Sketch("T1", "task 1"), Sketch("T2", "task 2")]
    async with open_store(db) as store:
        run = await open_run(store, label="flying", agent="mine", model="m", tasks=tasks)
        async with run.episode("T1") as episode:
            await episode.observe(url="http://shop.example/", title="Shop")
            episode.record_call(_call("gpt-4o-mini", 100, 10))
            await episode.action("click [1]")
            await episode.settle()
            with serving_app(db) as (url, _):
                _, page = get_json(url + "api/run/flying")
                assert page["total"] == 0 and [f["ref"]["task_id"] for f in page["in_flight"]] == ["T1"]
                assert page["in_flight"][0]["steps"] == 1 and page["in_flight_usage"][0]["usage"]["tokens"] == 110
                summary = page["usage"]
                assert summary["in_flight"]["tokens"] == 110 and summary["other_attempts"]["attempts"] == 0
                html = get_html(url + "run/flying")
                assert 'id="in-flight"' in html and "● in flight" in html and "no episode has finished yet" in html
                _, live = get_json(url + "api/run/flying/live")
                await episode.observe(url="http://shop.example/2", title="Shop 2")
                await episode.action("stop [done]")
                await episode.settle()
                _, moved = get_json(url + "api/run/flying/live")
                assert moved["token"] != live["token"], "a step of an episode in flight reloads the page"
                assert get_json(url + "api/run/flying")[1]["in_flight"][0]["steps"] == 2
                await episode.end("answered", "done")
        await run.close()
    with serving_app(db) as (url, _):
        _, page = get_json(url + "api/run/flying")
        assert page["in_flight"] == [] and page["total"] == 1 and page["usage"]["in_flight"]["tokens"] == 0
        assert 'id="in-flight"' not in get_html(url + "run/flying")
