"""The viewer's run-level pages over HTTP (page and ``/api/`` twin): the run page sorted by any column and failures
first, its headline, and how recorded text and verdicts are shown (search: ``test_view_search.py``; time, tokens,
cost and a recording run: ``test_view_usage.py``)."""

from __future__ import annotations

import asyncio
import re
import shutil
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from p2w_cli.view._render import shorten
from p2w_rt.replay.derived import family
from tests.helpers.view_app import get_html, get_json, link_queries, serving_app
from tests.helpers.view_support import build_simple_run, cli, fetch

pytestmark = pytest.mark.slow


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
    heading = link_queries(html, "P_avg")
    assert heading == [{"sort": "p_avg", "order": "desc", "judge": "rubric-rules"}], "a second click descends"
    assert 'aria-sort="ascending"' in html
    assert link_queries(get_html(demo_url + "run/earlier?sort=p_avg&order=desc"), "P_avg") == [
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
    assert link_queries(get_html(demo_url + "run/earlier"), "failures first") == [
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
        assert link_queries(html, "next ›") == [{"page": "2", "sort": "task", "order": "desc"}], (
            "the pager keeps the order"
        )
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
        rules = f"rubric-rules@{family('judge').get('rubric-rules').version}"
        assert heads == [(rules, total, total), ("human:ana@labels", 2, total)], "each named with its version"
        html = get_html(url)
        row = html[html.index(">earlier</a>") :]
        assert row.index("rubric-rules") < row.index("human:ana")
        assert link_queries(row, "human:ana@labels")[0] == {"judge": "human:ana"}, "a judge's link takes its id"
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
