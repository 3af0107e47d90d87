"""The viewer's JSON API (``/api/...``) against a real uvicorn server: each page and its JSON twin come from one
query, so they show the same runs, episodes, figures and flips; run lookups are cached until the log moves."""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path

import pytest

from p2w_rt.replay.metrics import figure, signed
from p2w_runtime.store import open_store
from p2w_runtime.testing.episodes import run_started
from tests.helpers.stored_support import rewrite_in_segment, run_of_label
from tests.helpers.view_app import get_html, get_json, serving_app
from tests.helpers.view_support import build_simple_run, fetch

pytestmark = pytest.mark.slow


def test_api_runs_lists_the_runs_and_figures_the_runs_page_shows(demo_url: str) -> None:
    status, runs = get_json(demo_url + "api/runs")
    html = get_html(demo_url)
    assert status == 200 and [r["info"]["started"]["label"] for r in runs] == ["earlier", "later"]
    for row in runs:
        info = row["info"]
        assert f'href="/run/{info["run_id"]}"' in html and info["run_id"][:13] in html
        assert info["episodes"] == 24 and f'<td class="num">{info["episodes"]}</td>' in html
        judges = [m["group"][0][1] for m in row["metrics"]]
        assert f"rubric-rules@{row['versions']['rubric-rules']}" in judges, "named with the version it is from"
        for m in row["metrics"]:
            shown = "".join(f'<td class="num">{figure(m["figures"][k])}</td>' for k in ("p_avg", "intent"))
            assert shown in html, f"the page shows {m['group']}'s P_avg and Intent as the API gives them"


def test_api_run_is_the_run_page_with_its_filters(demo_url: str) -> None:
    status, page = get_json(demo_url + "api/run/earlier")
    html = get_html(demo_url + "run/earlier")
    assert status == 200 and page["matched"] == page["total"] == 24 and f"{page['matched']} of 24" in html
    assert page["filter"]["judge"] == page["judges"][0], "the judge the page filters by when none is asked"
    p_web = {m["group"][0][1]: m["figures"]["p_web"] for m in page["metrics"]}
    assert figure(p_web[f"rubric-rules@{page['versions']['rubric-rules']}"]) == "0.917" and "0.917" in html
    assert [e["ref"]["task_id"] for e in page["shown"]] == re.findall(r'/episode/[^"]+">([^<]+)</a>', html)
    query = "?label=personalization_hallucination"
    _, filtered = get_json(demo_url + "api/run/earlier" + query)
    assert filtered["matched"] == 1 and [e["ref"]["task_id"] for e in filtered["shown"]] == ["Tomas_Reyes_B1"]
    assert "1 of 24" in get_html(demo_url + "run/earlier" + query)


def test_api_episode_is_the_episode_page_built_on_the_trajectory(demo_url: str) -> None:
    status, ep = get_json(demo_url + "api/run/earlier/episode/Tomas_Reyes_B1")
    html = get_html(demo_url + "run/earlier/episode/Tomas_Reyes_B1")
    t = ep["trajectory"]
    assert status == 200 and ep["run_label"] == "earlier" and t["task_id"] == "Tomas_Reyes_B1"
    sections = re.findall(r'<section class="step" id="step-([^"]+)" data-events="([^"]*)"', html)
    assert [str(s["number"]) if s["number"] is not None else "pre" for s in ep["steps"]] == [n for n, _ in sections]
    ids = [
        [o["record"]["event_id"] for o in s["observations"]]
        + [r["event_id"] for r in s["reasoning"]]
        + [a["event_id"] for a in s["actions"]]
        for s in ep["steps"]
    ]
    for step_ids, (_, shown) in zip(ids, sections, strict=True):
        assert set(step_ids) <= set(shown.split()), "each step shows the trajectory's records of that step"
    actions = [a["event_id"] for s in ep["steps"] for a in s["actions"]]
    assert actions == [a["event_id"] for a in t["actions"]] and actions, "the steps are the projection's actions"
    labels = {x["label"] for rec, current in ep["classifications"] if current for x in rec["payload"]["labels"]}
    assert "personalization_hallucination" in labels and "personalization_hallucination" in html
    assert t["final_state"]["event_id"] in html and f"ev-{t['end']['event_id']}" in html


def test_api_compare_is_the_compare_page(demo_url: str) -> None:
    status, c = get_json(demo_url + "api/compare?a=earlier&b=later")
    html = get_html(demo_url + "compare?a=earlier&b=later")
    flips = [t["flip"] for t in c["diff"]["tasks"]]
    assert status == 200 and (flips.count("gained"), flips.count("lost")) == (7, 1)
    assert "7 gained" in html and "1 lost" in html and c["a_local"] and c["b_local"]
    diverged = [t["task_id"] for t in c["diff"]["tasks"] if c["sides"][t["task_id"]]["rows"]]
    assert diverged and all(f"{task} side by side" in html for task in diverged)


def test_api_errors_are_json_with_the_pages_status(demo_url: str) -> None:
    status, body = get_json(demo_url + "api/run/no-such-run")
    assert status == 404 and body["error"] == "Not found" and "no run 'no-such-run'" in body["message"]
    status, body = get_json(demo_url + "api/run/earlier/episode/Nobody_A1")
    assert status == 404 and "has no episode 'Nobody_A1'" in body["message"]
    status, body = get_json(demo_url + "api/compare?a=earlier")
    assert status == 400 and body["error"] == "Compare needs two runs"
    status, body = get_json(demo_url + "api/compare?a=earlier&b=later&judge=rubric-llm")
    assert status == 409 and "has no rubric-llm judgments for" in body["message"]
    status, body = get_json(demo_url + "api/no/such/thing")
    assert status == 404 and body["error"] == "Not found"


def test_compare_refuses_an_unknown_parameter_as_every_page_does(demo_url: str) -> None:
    status, body = get_json(demo_url + "api/compare?a=earlier&b=later&zzz=1")
    assert status == 400 and body["error"] == "Bad parameter" and body["message"].startswith("?zzz=:"), body
    assert "?a=, ?b=, ?judge=" in body["message"]
    status, _, html = fetch(demo_url + "compare?a=earlier&b=later&zzz=1")
    assert status == 400 and "Bad parameter" in html.decode()


def test_pages_list_the_runs_once_until_the_log_moves(demo: Path, tmp_path: Path) -> None:
    db = tmp_path / "cached.db"
    shutil.copy(demo, db)
    asyncio.run(build_simple_run(db, "small", episodes=2))
    with serving_app(db) as (url, app):
        index = app.state.queries.index
        assert "small" in get_html(url) and index.listed == 1
        for path in ("run/earlier", "run/small", "run/earlier/episode/Tomas_Reyes_B1", ""):
            get_html(url + path)
        for path in ("api/runs", "api/run/small", "api/run/earlier/episode/Tomas_Reyes_B1"):
            assert get_json(url + path)[0] == 200
        assert index.listed == 1, "nothing was appended: every page found its runs in memory"

        async def append() -> None:
            async with open_store(db) as store:
                await store.append([run_started("01appended-run", "appended")])

        asyncio.run(append())
        assert "appended" in get_html(url) and index.listed == 2, (
            "an append moves the log end: the runs are listed again"
        )
        _, page = get_json(url + "api/run/appended")
        assert page["info"]["run_id"] == "01appended-run" and index.listed == 2


def test_an_unknown_judge_is_a_400_naming_it_and_the_known_judges(demo_url: str) -> None:
    status, body = get_json(demo_url + "api/compare?a=earlier&b=later&judge=no-such-judge")
    assert status == 400 and body["error"] == "Unknown judge"
    assert "'no-such-judge'" in body["message"] and "rubric-rules" in body["message"] and "\n" not in body["message"]
    status, _, html = fetch(demo_url + "compare?a=earlier&b=later&judge=no-such-judge")
    page = html.decode()
    assert status == 400 and "no-such-judge" in page and "rubric-rules, " in page and "Traceback" not in page


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("end=exploded", "?end="),
        ("label=no_such_label", "?label="),
        ("website=nowhere.example", "?website="),
        ("judge=no-such-judge", "?judge="),
        ("success=maybe", "?success="),
        ("level=two", "?level="),
        ("level=9", "?level="),
        ("page=two", "?page="),
        ("page=0", "?page="),
        ("page=%C2%B2", "?page="),
        ("level=-1", "?level="),
        ("page=5", "?page="),
        ("colour=red", "?colour"),
        ("page=" + "9" * 5000, "?page="),  # over int()'s 4300 digits
        ("level=" + "1" * 5000, "?level="),
    ],
)
def test_an_invalid_filter_value_is_a_400_naming_the_parameter(demo_url: str, query: str, named: str) -> None:
    status, body = get_json(demo_url + "api/run/earlier?" + query)
    assert status == 400 and body["error"] == "Bad filter" and body["message"].startswith(named), body
    status, _, html = fetch(demo_url + "run/earlier?" + query)
    assert status == 400 and "Bad filter" in html.decode()


def test_the_end_filter_keeps_the_episodes_that_ended_so(demo_url: str) -> None:
    _, page = get_json(demo_url + "api/run/earlier")
    ends = [e["finished"]["end_reason"] for e in page["shown"]]
    reason = min(set(ends), key=ends.count)
    _, kept = get_json(demo_url + f"api/run/earlier?end={reason}&level=&label=")
    assert kept["matched"] == ends.count(reason) < page["total"]
    assert {e["finished"]["end_reason"] for e in kept["shown"]} == {reason}


def test_an_unexpected_failure_is_a_500_page_in_one_line_without_a_traceback(demo: Path, tmp_path: Path) -> None:
    db = tmp_path / "damaged.db"
    shutil.copy(demo, db)
    stream = f"{run_of_label(db, 'earlier')}/Tomas_Reyes_B1"
    damaged = '{"step": "not a number"}'  # a damaged file, as a failing disk leaves it (the episodes are segments)
    assert rewrite_in_segment(db, stream, lambda e: damaged if e.type == "action" else None) > 0
    with serving_app(db) as (url, _):
        status, body = get_json(url + "api/run/earlier/episode/Tomas_Reyes_B1")
        assert status == 500 and body["error"] == "Viewer error" and "\n" not in body["message"]
        status, headers, html = fetch(url + "run/earlier/episode/Tomas_Reyes_B1")
        assert status == 500 and headers["content-type"].startswith("text/html")
        assert "Viewer error" in html.decode() and "Traceback" not in html.decode()


def test_compare_deltas_are_in_the_clis_format_and_unit(demo_url: str) -> None:
    _, c = get_json(demo_url + "api/compare?a=earlier&b=later")
    html = get_html(demo_url + "compare?a=earlier&b=later")
    delta_row = html.split('<tr class="delta">', 1)[1].split("</tr>", 1)[0]
    cells = re.findall(r'<td class="num[^"]*">([^<]*)</td>', delta_row)
    assert cells == [signed(m["delta"]) for m in c["diff"]["metrics"].values()], "+0.042 under 0.917, not +4.2"
    assert any(cell.startswith("+0.") for cell in cells)
    ci_row = html.split('<tr class="ci">', 1)[1].split("</tr>", 1)[0]
    for m in c["diff"]["metrics"].values():
        if m["ci"]:
            assert f"[{signed(m['ci'][0])}, {signed(m['ci'][1])}]" in ci_row


def test_the_reasoning_comes_before_the_history_query_it_led_to(demo_url: str) -> None:
    _, ep = get_json(demo_url + "api/run/earlier/episode/Lena_Fischer_B1")
    html = get_html(demo_url + "run/earlier/episode/Lena_Fischer_B1")
    asked = [s for s in ep["steps"] if s["history"] and s["reasoning"]]
    assert asked, "the demo's Lena_Fischer_B1 asks its history after reasoning about it"
    for step in asked:
        why, query = step["reasoning"][0]["event_id"], step["history"][0]["query_event_id"]
        assert html.index(f'id="ev-{why}"') < html.index(f'id="ev-{query}"'), f"step {step['number']}"
        shown = [k for k, _ in step["entries"]]
        assert shown.index("reasoning") < shown.index("action") < shown.index("history"), shown


def test_an_unchanged_screenshot_is_shown_once_and_then_linked(demo_url: str) -> None:
    _, ep = get_json(demo_url + "api/run/earlier/episode/Lena_Fischer_B1")
    html = get_html(demo_url + "run/earlier/episode/Lena_Fischer_B1")
    shots = [(s["number"], o["screenshot"], o["same_as_step"]) for s in ep["steps"] for o in s["observations"]]
    repeated = [
        (n, sha, same) for (n, sha, same), (_, before, _) in zip(shots[1:], shots, strict=False) if sha == before
    ]
    assert repeated, "memory_access steps see the page they asked from: the same screenshot blob"
    for number, sha, same in repeated:
        assert same is not None and same < number
        assert html.count(f'<img class="shot" src="/blob/{sha}"') == 1, "each unchanged screenshot is shown once"
        assert f'unchanged since <a href="#step-{same}">step {same}</a>' in html
    for sha in {sha for _, sha, _ in shots}:
        changed = sum(1 for _, other, same in shots if other == sha and same is None)
        assert html.count(f'<img class="shot" src="/blob/{sha}"') == changed, "the final state's is linked too"
