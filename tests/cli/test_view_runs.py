"""The viewer's run-level pages over HTTP (page and ``/api/`` twin): search across runs, the run page sorted by any
column and failures first, each episode's time, tokens and cost, and the state a recording run's page polls."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import sqlite3
from datetime import datetime
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

import pytest

from p2w_cli.view._render import shorten
from p2w_rt.schemas import LlmCall, LlmUsage
from p2w_runtime.llm import PriceTable
from p2w_runtime.recording import open_run
from p2w_runtime.store import open_store
from p2w_runtime.testing.episodes import EpisodeBuilder, run_finished, run_started
from tests.helpers.recording_tasks import TASKS, Sketch
from tests.helpers.stored_support import run_of_label, stored_events
from tests.helpers.view_app import get_html, get_json, serving_app
from tests.helpers.view_support import HOSTILE, build_hostile_store, build_simple_run, cli, event_count, fetch

pytestmark = pytest.mark.slow


def _links(html: str, text: str) -> list[dict[str, str]]:
    """The query of each link of ``html`` whose text is ``text``."""
    hrefs = re.findall(r'<a [^>]*href="([^"]*)"[^>]*>' + re.escape(text) + "</a>", html)
    return [dict(parse_qsl(urlsplit(unescape(h)).query)) for h in hrefs]


def _hits(url: str, query: str) -> list[dict[str, Any]]:
    status, page = get_json(url + "api/search?" + query)
    assert status == 200, page
    return page["hits"]


# -- search ---------------------------------------------------------------------------------------------------


def test_search_finds_episodes_by_task_query_answer_and_error_label_across_runs(demo_url: str) -> None:
    by_task = _hits(demo_url, "q=tomas_reyes_b1")
    assert [(h["run_label"], h["task_id"], h["matched"]) for h in by_task] == [
        ("earlier", "Tomas_Reyes_B1", ["task"]),
        ("later", "Tomas_Reyes_B1", ["task"]),
    ], "case-insensitive, every run, oldest run first"
    _, run = get_json(demo_url + "api/run/earlier")
    shown = next(e for e in run["shown"] if e["ref"]["task_id"] == "Tomas_Reyes_B1")
    metrics = shown["judgments"]["rubric-rules"]["payload"]["metrics"]
    first = by_task[0]
    assert first["judge"] == "rubric-rules" and first["scores"]["p_avg"] == metrics["p_avg"]
    assert first["scores"]["success_rate"] == metrics["success"] and first["end_reason"] == "answered"

    (labelled,) = _hits(demo_url, "q=HALLUCINATION")
    assert (labelled["run_label"], labelled["task_id"], labelled["matched"]) == (
        "earlier",
        "Tomas_Reyes_B1",
        ["label"],
    )
    assert "personalization_hallucination" in labelled["labels"]

    in_query = _hits(demo_url, "q=trail+running+shoes&in=query")
    assert {h["task_id"] for h in in_query} == {"Tomas_Reyes_B1", "Tomas_Reyes_B2"} and len(in_query) == 4
    assert all("trail running shoes" in h["query"].lower() and h["matched"] == ["query"] for h in in_query)
    answers = _hits(demo_url, "q=ridgeline&in=answer")
    assert answers and all("Ridgeline" in h["answer"] for h in answers)
    assert _hits(demo_url, "q=ridgeline&in=query") == [], "?in= restricts the fields searched"
    both = _hits(demo_url, "q=tomas+hallucination")
    assert [(h["task_id"], h["matched"]) for h in both] == [("Tomas_Reyes_B1", ["task", "label"])], "each word anywhere"

    html = get_html(demo_url + "search?q=tomas_reyes_b1")
    for hit in by_task:
        assert f'href="/run/{hit["run_id"]}/episode/{hit["episode_id"]}"' in html
    assert "2 of 48 episodes in 2 runs" in html and 'value="tomas_reyes_b1"' in html


def test_every_page_has_the_search_box(demo_url: str) -> None:
    for path in ("", "run/earlier", "run/earlier/episode/Tomas_Reyes_B1", "compare?a=earlier&b=later", "search?q=x"):
        html = get_html(demo_url + path)
        assert re.search(
            r'<form class="search-box" method="get" action="/search"[^>]*>\s*<input type="search" name="q"', html
        ), path


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("", "?q:"),
        ("q=", "?q:"),
        ("q=%20%20%20", "?q:"),
        ("q=" + "x" * 201, "?q:"),
        ("q=" + "y" * 20_000, "?q:"),
        ("q=%FF%FE", "?q:"),
        ("q=a%00b", "?q:"),
        ("q=a%1Bb", "?q:"),
        ("q=tomas&in=everywhere", "?in="),
        ("q=tomas&judge=nobody", "?judge="),
        ("q=tomas&page=0", "?page="),
        ("q=tomas&page=9", "?page="),
        ("q=tomas&page=%C2%B2", "?page="),
        ("q=tomas&colour=red", "?colour"),
    ],
)
def test_a_bad_search_is_a_400_naming_the_parameter(demo_url: str, query: str, named: str) -> None:
    status, body = get_json(demo_url + "api/search?" + query)
    assert status == 400 and body["error"] == "Bad search" and body["message"].startswith(named), body
    assert "\n" not in body["message"] and len(body["message"]) < 200, "one line, not the query echoed whole"
    status, _, html = fetch(demo_url + "search?" + query)
    assert status == 400 and "Bad search" in html.decode() and "Traceback" not in html.decode()


def test_search_reads_any_language_case_insensitively(tmp_path: Path) -> None:
    db = tmp_path / "accents.db"

    async def build() -> None:
        async with open_store(db) as store:
            await store.append([run_started("01accents-run", "accents")])
            for task, query, answer in (
                ("Jonas_Weber_A1", "Brot in der Hauptstraße in Zürich kaufen", "Bäckerei Müller"),
                ("Jonas_Weber_A2", "Buy bread in Zurich", "Bakery"),
            ):
                b = EpisodeBuilder("01accents-run", task, query=query)
                b.observation(1, "https://shop.example/", title="shop")
                b.action(1, "stop", answer)
                b.finish("answered", answer, final_url="https://shop.example/", steps=1)
                await store.append(b.events, b.blobs)
            await store.append([run_finished("01accents-run", 2)])

    asyncio.run(build())
    with serving_app(db) as (url, _):
        for words in ("ZÜRICH", "hauptstrasse", "HAUPTSTRASSE zürich", "bäckerei"):
            hits = _hits(url, "q=" + quote(words))
            assert [h["task_id"] for h in hits] == ["Jonas_Weber_A1"], words
        assert [h["task_id"] for h in _hits(url, "q=zurich")] == ["Jonas_Weber_A2"], "ü is not u"
        assert "Jonas_Weber_A1" in get_html(url + "search?q=" + quote("Zürich"))


# -- sorting ----------------------------------------------------------------------------------------------------


def _scores(page: dict[str, Any], key: str) -> list[float | None]:
    return [
        (e["judgments"].get("rubric-rules") or {}).get("payload", {}).get("metrics", {}).get(key) for e in page["shown"]
    ]


def test_the_run_page_sorts_by_each_score_of_the_selected_judge(demo_url: str) -> None:
    _, plain = get_json(demo_url + "api/run/earlier")
    for key, stored in (
        ("p_web", "p_web"),
        ("p_pref", "p_pref"),
        ("p_avg", "p_avg"),
        ("intent", "intent"),
        ("success_rate", "success"),
    ):
        _, up = get_json(demo_url + f"api/run/earlier?sort={key}")
        _, down = get_json(demo_url + f"api/run/earlier?sort={key}&order=desc")
        assert _scores(up, stored) == sorted(_scores(plain, stored)), key
        assert _scores(down, stored) == sorted(_scores(plain, stored), reverse=True), key
        assert up["filter"]["sort"] == key and down["filter"]["descending"] is True
        ties = [e["index"] for e in up["shown"] if e["judgments"]["rubric-rules"]["payload"]["metrics"][stored] == 1.0]
        assert ties == sorted(ties), "equal scores keep recording order"
    html = get_html(demo_url + "run/earlier?sort=p_avg")
    rows = re.findall(r'/episode/[^"]+">([^<]+)</a>', html)
    _, up = get_json(demo_url + "api/run/earlier?sort=p_avg")
    assert rows == [e["ref"]["task_id"] for e in up["shown"]], "the page shows the API's order"
    heading = _links(html, "P_avg")
    assert heading == [{"sort": "p_avg", "order": "desc", "judge": "rubric-rules"}], "a second click descends"
    assert 'aria-sort="ascending"' in html
    assert _links(get_html(demo_url + "run/earlier?sort=p_avg&order=desc"), "P_avg") == [
        {"sort": "p_avg", "judge": "rubric-rules"}
    ], "and a third ascends again"


def test_failures_first_puts_every_failure_before_every_success(demo_url: str) -> None:
    _, page = get_json(demo_url + "api/run/earlier?sort=failures")
    success = _scores(page, "success")
    assert 0 < success.count(0.0) < len(success)
    assert success == sorted(success), "failures (0) first, then successes (1)"
    failed = [e for e in page["shown"] if e["judgments"]["rubric-rules"]["payload"]["metrics"]["success"] == 0.0]
    labels = [len(e["labels"]) for e in failed]
    assert labels == sorted(labels, reverse=True), "the failures with most error labels first"
    assert failed[0]["ref"]["task_id"] == "Tomas_Reyes_B1", "the hallucination with two labels leads"
    assert _links(get_html(demo_url + "run/earlier"), "failures first") == [
        {"sort": "failures", "judge": "rubric-rules"}
    ]


def test_sorting_comes_before_paging(tmp_path: Path) -> None:
    db = tmp_path / "big.db"
    asyncio.run(build_simple_run(db, "big", episodes=150))
    with serving_app(db) as (url, _):
        _, first = get_json(url + "api/run/big?sort=task&order=desc")
        _, second = get_json(url + "api/run/big?sort=task&order=desc&page=2")
        tasks = [e["ref"]["task_id"] for e in first["shown"] + second["shown"]]
        assert tasks == sorted(tasks, reverse=True) and tasks[0] == "Persona0149_A1" and len(tasks) == 150
        html = get_html(url + "run/big?sort=task&order=desc")
        assert _links(html, "next ›") == [{"page": "2", "sort": "task", "order": "desc"}], "the pager keeps the order"
        _, by_time = get_json(url + "api/run/big?sort=time&order=desc")
        times = [u["seconds"] for u in by_time["shown_usage"]]
        assert times == sorted(times, reverse=True)


@pytest.mark.parametrize(("query", "named"), [("sort=colour", "?sort="), ("sort=p_avg&order=sideways", "?order=")])
def test_an_unknown_sort_is_a_400_naming_the_known_keys(demo_url: str, query: str, named: str) -> None:
    status, body = get_json(demo_url + "api/run/earlier?" + query)
    assert status == 400 and body["error"] == "Bad filter" and body["message"].startswith(named)
    known = body["message"].split("known: ")[-1] if named == "?sort=" else body["message"]
    for key in (
        ("failures", "p_web", "p_pref", "intent", "success_rate", "steps", "tokens", "cost", "time")
        if named == "?sort="
        else ("asc", "desc")
    ):
        assert key in known


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
    with sqlite3.connect(db) as conn:
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


def test_a_runs_headline_is_its_default_judge_with_judged_of_total_not_a_few_human_labels(
    demo: Path, tmp_path: Path
) -> None:
    db = tmp_path / "labelled.db"
    shutil.copy(demo, db)
    labels = tmp_path / "labels.csv"
    labels.write_text(
        "run,task,point,label,annotator\nearlier,Lena_Fischer_B1,success,1,ana\nearlier,Tomas_Reyes_B1,success,1,ana\n"
    )
    assert cli("--db", str(db), "import-labels", str(labels), cwd=tmp_path).returncode == 0
    with serving_app(db) as (url, _):
        _, rows = get_json(url + "api/runs")
        earlier = next(r for r in rows if r["info"]["started"]["label"] == "earlier")
        total = earlier["info"]["episodes"]
        assert earlier["headline"] == "rubric-rules" and total > 2
        heads = [(m["group"][0][1], m["judged"], m["episodes"]) for m in earlier["metrics"]]
        assert heads == [("rubric-rules", total, total), ("human:ana", 2, total)], heads
        html = get_html(url)
        row = html[html.index(">earlier</a>") :]
        assert row.index("rubric-rules") < row.index("human:ana")
        assert f'<td class="num judged">{total}/{total}</td>' in row and f'<td class="num judged">2/{total}</td>' in row
        _, chosen = get_json(url + "api/runs?judge=human:ana")
        assert next(r for r in chosen if r["info"]["started"]["label"] == "earlier")["headline"] == "human:ana"
        assert "headed by human:ana" in get_html(url + "?judge=human%3Aana")
        status, _, body = fetch(url + "?judge=nobody")
        assert status == 400 and b"known: " in body and b"rubric-rules" in body
        assert fetch(url + "?sort=x")[0] == 400
        _, page = get_json(url + "api/run/earlier")
        assert page["filter"]["judge"] == "rubric-rules", "the run page is headed by the default judge too"


def test_long_text_is_cut_at_a_words_end_with_an_ellipsis_and_kept_whole_in_its_title(demo_url: str) -> None:
    cut = 0
    for path in ("run/earlier", "search?q=a"):
        for title, shown in re.findall(r'title="([^"]+)">([^<]*…)<', get_html(demo_url + path)):
            title, shown = unescape(title), unescape(shown)
            kept = shown[:-1]
            assert title.startswith(kept) and len(kept) < len(title), (title, shown)
            assert not title[len(kept)].isalnum() or not kept[-1].isalnum(), f"cut mid-word: {shown!r}"
            cut += 1
    assert cut >= 2, "the demo's answers are longer than a cell"
    assert shorten("Fremont, Seattle and Portland", 14) == "Fremont…"
    assert shorten("one to three", 9) == "one to…" and shorten("short", 9) == "short"
    assert shorten("Supercalifragilistic", 10) == "Supercali…", "one long word is still cut, with the ellipsis"


def test_the_end_badge_is_coloured_by_the_verdict_and_error_pages_link_back_to_their_run(demo_url: str) -> None:
    html = get_html(demo_url + "run/earlier")
    rows = re.findall(r'class="end end-(\w+) outcome-(\w+)".*?class="ok-(yes|no)"', html, re.S)
    assert len(rows) > 2 and all(outcome == verdict for _, outcome, verdict in rows), rows
    assert ("answered", "no", "no") in rows, "a failed episode that answered is not green"
    failed = get_html(demo_url + "run/earlier/episode/Tomas_Reyes_B1")
    assert 'class="end end-answered outcome-no"' in failed
    assert 'class="end end-answered outcome-' in get_html(demo_url + "search?q=Tomas")
    for path, status in (("run/earlier/episode/nope", 404), ("run/earlier?sort=nope", 400)):
        code, _, body = fetch(demo_url + path)
        assert code == status and b'<a href="/run/' in body and b"Back to run earlier</a>" in body, path
    code, _, body = fetch(demo_url + "run/nope")
    assert code == 404 and b"Back to run" not in body and b"All runs" in body


def test_recorded_text_in_search_results_is_printed_escaped(tmp_path: Path) -> None:
    db = tmp_path / "hostile.db"
    asyncio.run(build_hostile_store(db, "http://127.0.0.1:9"))
    with serving_app(db) as (url, _):
        (hit,) = _hits(url, "q=" + quote("<script>"))
        assert hit["matched"] == ["query", "answer"] and HOSTILE in hit["query"]
        html = get_html(url + "search?q=" + quote("<script>alert"))
        assert "<script>alert" not in html and "&lt;script&gt;alert(&#39;xss&#39;)&lt;/script&gt;" in html
        assert re.search(r"<img [^>]*onerror", html) is None
