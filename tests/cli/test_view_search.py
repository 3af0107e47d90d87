"""The viewer's search across runs over HTTP (page and ``/api/search`` twin): what it finds, in any language, a bad
query as a 400, and recorded text printed escaped."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from p2w_runtime.store import open_store
from p2w_runtime.testing.episodes import EpisodeBuilder, run_finished, run_started
from tests.helpers.view_app import get_html, get_json, serving_app
from tests.helpers.view_support import HOSTILE, build_hostile_store, fetch

pytestmark = pytest.mark.slow


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
        ("q=tomas&page=" + "9" * 5000, "?page="),  # over int()'s 4300 digits
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


def test_recorded_text_in_search_results_is_printed_escaped(tmp_path: Path) -> None:
    db = tmp_path / "hostile.db"
    asyncio.run(build_hostile_store(db, "http://127.0.0.1:9"))
    with serving_app(db) as (url, _):
        (hit,) = _hits(url, "q=" + quote("<script>"))
        assert hit["matched"] == ["query", "answer"] and HOSTILE in hit["query"]
        html = get_html(url + "search?q=" + quote("<script>alert"))
        assert "<script>alert" not in html and "&lt;script&gt;alert(&#39;xss&#39;)&lt;/script&gt;" in html
        assert re.search(r"<img [^>]*onerror", html) is None
