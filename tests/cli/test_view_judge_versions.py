"""The viewer never averages two versions of one judge as one: its runs list, run page, compare page and static export
score each judge with one version by ``metrics``' rule (the newest among the run's current judgments; for compare,
``diff``'s one version for both runs), name it (``rubric-rules@5``), show an episode judged only by another version
as unjudged and say how to judge it again; a first page stored before the viewer kept versions is rebuilt."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pydantic_core
import pytest

from p2w_cli.view._filters import parse_filter
from p2w_cli.view._first_page import MODEL
from p2w_cli.view._pages import ViewQueries, ViewState
from p2w_cli.view._run_page import RunPage
from p2w_rt.replay.derived import family
from p2w_runtime.domain import find_run
from p2w_runtime.store import open_store
from tests.helpers.builders import build
from tests.helpers.judge_versions import judged_at
from tests.helpers.raw_sqlite import raw_sqlite
from tests.helpers.view_app import fresh_open, get_html, get_json
from tests.helpers.view_support import cli, serving

pytestmark = pytest.mark.slow

VERSION = family("judge").get("rubric-rules").version
"""The installed rubric-rules' version: the one ``replay`` judges with, newer than the "4" written below."""
RULES = f"rubric-rules@{VERSION}"
TASKS = ("Alex_Garcia_A3", "Alex_Garcia_A1", "Alex_Garcia_B1")
"""``build``'s episodes; rubric-rules scores them success 1, 1, 0."""


def judged(db: Path, *at: tuple[str, str, str, float]) -> None:
    """Judgments by rubric-rules at another version: (run label, task, version, every figure's value)."""

    async def go() -> None:
        async with open_store(db) as store:
            for label, task, version, value in at:
                await judged_at(store, (await find_run(store, label)).run_id, task, version, value)

    asyncio.run(go())


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """Runs a and b of the same three tasks: a judged by the installed rubric-rules, then one of its episodes again
    by version 4 (the latest judgment of that episode, success 0); b judged by version 4 only (all 0)."""
    path = tmp_path / "versions.db"
    build(path, label="a")
    build(path, label="b")
    assert cli("--db", str(path), "replay", "a", "--judge", "rubric-rules", cwd=tmp_path).returncode == 0
    judged(path, ("a", "Alex_Garcia_A3", "4", 0.0), *[("b", task, "4", 0.0) for task in TASKS])
    return path


def metrics_of(db: Path, label: str) -> dict[str, Any]:
    """``p2w-rt metrics LABEL``'s one row, as JSON."""
    done = cli("--db", str(db), "metrics", label, "--format", "json", cwd=db.parent)
    assert done.returncode == 0, done.stderr
    (row,) = [row for line in done.stdout.splitlines() if (row := json.loads(line))["table"] == "main"]
    return row


def heads(row: dict[str, Any]) -> list[tuple[str, int, int, float]]:
    """A runs-list line's metric rows: judge column, judged, episodes, SR (as ``metrics`` rounds it)."""
    return [
        (m["group"][0][1], m["judged"], m["episodes"], round(m["figures"]["success_rate"], 6)) for m in row["metrics"]
    ]


def test_the_runs_list_and_run_page_score_a_judge_with_one_version_as_metrics_does(db: Path) -> None:
    a, b = metrics_of(db, "a"), metrics_of(db, "b")
    assert (a["judge"], a["success_rate"], b["judge"], b["success_rate"]) == (RULES, 0.666667, "rubric-rules@4", 0.0)
    with serving(db, cwd=db.parent) as url:
        _, runs = get_json(url + "api/runs")
        by_label = {row["info"]["started"]["label"]: row for row in runs}
        assert heads(by_label["a"]) == [(RULES, 3, 3, a["success_rate"])], "a's older judgment of A3 is not averaged in"
        assert heads(by_label["b"]) == [("rubric-rules@4", 3, 3, b["success_rate"])]
        listing = get_html(url)
        assert f"<td>{RULES}</td>" in listing and "<td>rubric-rules@4</td>" in listing

        _, page = get_json(url + "api/run/a")
        shown = {e["ref"]["task_id"]: e["judgments"]["rubric-rules"]["payload"] for e in page["shown"]}
        assert {task: (j["judge_version"], j["metrics"]["success"]) for task, j in shown.items()} == {
            "Alex_Garcia_A3": (VERSION, 1.0),
            "Alex_Garcia_A1": (VERSION, 1.0),
            "Alex_Garcia_B1": (VERSION, 0.0),
        }
        assert page["versions"] == {"rubric-rules": VERSION} and page["outdated"] == []
        html = get_html(url + "run/a")
        assert f"<td>{RULES}</td>" in html and f'<option value="rubric-rules" selected>{RULES}</option>' in html
        _, failed = get_json(url + "api/run/a?success=no")
        assert [e["ref"]["task_id"] for e in failed["shown"]] == ["Alex_Garcia_B1"]
        _, found = get_json(url + "api/search?q=alex_garcia_a3")
        hits = [(h["run_label"], h["judge"], h["judge_version"], h["scores"]["success_rate"]) for h in found["hits"]]
        assert hits == [("a", "rubric-rules", VERSION, 1.0), ("b", "rubric-rules", "4", 0.0)]
        assert f'<td class="nowrap">{RULES}</td>' in get_html(url + "search?q=alex_garcia_a3")


def test_compare_scores_both_runs_with_the_version_diff_uses(db: Path) -> None:
    done = cli("--db", str(db), "diff", "a", "b", "--json", cwd=db.parent)
    assert done.returncode == 0, done.stderr
    diff = json.loads(done.stdout)
    assert diff["judge_version"] == VERSION
    with serving(db, cwd=db.parent) as url:
        _, compared = get_json(url + "api/compare?a=a&b=b")
        d = compared["diff"]
        assert (d["a"]["judge_version"], d["b"]["judge_version"]) == (VERSION, VERSION), "b is not scored at 4"
        sr = d["metrics"]["success_rate"]
        assert (round(sr["a"], 6), round(sr["b"], 6), sr["delta"]) == (
            diff["metrics"]["success_rate"]["a"],
            diff["metrics"]["success_rate"]["b"],
            diff["metrics"]["success_rate"]["delta"],
        )
        assert f"<small>judge {RULES}</small>" in get_html(url + "compare?a=a&b=b")


def test_the_static_export_names_the_version_and_compares_at_one(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    done = cli("--db", str(db), "view", "--export", str(out), "a", "b", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    index = (out / "index.html").read_text()
    a_line, b_line = index[index.index(">a</a>") :], index[index.index(">b</a>") :]
    assert a_line.index(f"<td>{RULES}</td>") < a_line.index(">b</a>") and "<td>rubric-rules@4</td>" in b_line
    assert '<td class="num">0.667</td>' in a_line[: a_line.index(">b</a>")], "a's SR at one version: 2 of 3"
    (compare,) = out.glob("compare-*.html")
    page = compare.read_text()
    assert f"<small>judge {RULES}</small>" in page and 'class="num ">+0.000</td>' in page.replace("\n", "")


def test_episodes_judged_only_by_an_older_version_are_unjudged_and_the_page_says_how_to_judge_them(db: Path) -> None:
    """b is judged by version 4; then one episode by the installed version: the kept read brought forward (no whole
    read) shows what a fresh viewer shows, the two others unjudged by it and the line ``metrics`` prints for them."""

    async def go() -> tuple[list[RunPage], RunPage, int]:
        state = ViewState(db)
        async with open_store(db) as store:
            state.stores[db.resolve()] = store
            queries = ViewQueries(state)
            before = await queries.run("b", *parse_filter({}))
            await judged_at(store, before.info.run_id, "Alex_Garcia_A1", VERSION, 1.0)
            after = await queries.run("b", *parse_filter({}))
            unjudged = await queries.run("b", *parse_filter({"success": "unjudged"}))
            return [before, after], unjudged, queries.reads.advanced

    (before, after), unjudged, advanced = asyncio.run(go())
    assert [dict(m.group)["judge"] for m in before.metrics] == ["rubric-rules@4"] and before.outdated == []
    assert advanced == 1, "the page after the judgment is the kept read brought forward"
    assert [(dict(m.group)["judge"], m.judged, m.episodes) for m in after.metrics] == [(RULES, 1, 3)]
    assert [row.ref.task_id for row in unjudged.shown] == ["Alex_Garcia_A3", "Alex_Garcia_B1"]
    fresh, _ = fresh_open(db, "b")
    assert pydantic_core.to_json(fresh) == pydantic_core.to_json(after)

    line = (
        f"b: 2 episodes judged by rubric-rules only at version 4, not {VERSION}: they are left out of its figures; "
        "judge again: p2w-rt replay b --judge rubric-rules"
    )
    done = cli("--db", str(db), "metrics", "b", cwd=db.parent)
    assert done.returncode == 0 and done.stderr.splitlines() == [line], done.stderr
    with serving(db, cwd=db.parent) as url:
        assert f'<p class="facts outdated">{line}</p>' in get_html(url + "run/b")


def test_a_first_page_stored_before_it_named_versions_is_rebuilt_by_the_next_open(db: Path) -> None:
    """A row written by the viewer before it kept each judge's version (no ``versions``, no ``outdated``, metric rows
    named by the judge alone) is not served: the next open rebuilds it, and the open after serves the new row."""
    built, queries = fresh_open(db, "a")
    assert queries.stored_pages == 0
    with raw_sqlite(db) as conn:
        (body,) = conn.execute("SELECT body FROM summaries WHERE kind = ? AND key = ?", (MODEL, built.info.run_id))
        stored = json.loads(body[0])
        del stored["facets"]["versions"], stored["facets"]["outdated"]
        for table in ("metrics", "metrics_by_level"):
            for row in stored["facets"][table]:
                row["group"] = [[k, "rubric-rules" if k == "judge" else v] for k, v in row["group"]]
        conn.execute("UPDATE summaries SET body = ? WHERE kind = ?", (json.dumps(stored), MODEL))
    rebuilt, queries = fresh_open(db, "a")
    assert queries.stored_pages == 0 and rebuilt.versions == {"rubric-rules": VERSION}
    assert pydantic_core.to_json(rebuilt) == pydantic_core.to_json(built)
    kept, queries = fresh_open(db, "a")
    assert queries.stored_pages == 1 and pydantic_core.to_json(kept) == pydantic_core.to_json(built)
