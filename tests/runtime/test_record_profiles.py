"""`record --profiles`: AgenticShop users as curation tasks on the demo shop, judged like an imported curation.

The scripted LLM plays a planner that browses the shop and answers in the reference's format, then the
extractor and the checklist judge; the pages the judges read are the ones Chromium captured at the end.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.agent.prompts import PLANNER_MARKER
from p2w_runtime.data import curation_tasks, load_profiles
from p2w_runtime.testing import ScriptedLlm, Text, last_user_message, system_message
from tests.helpers.paths import REPO
from tests.helpers.stored_judgments import judgments

SAMPLE = REPO / "p2w_runtime" / "demo" / "sites" / "agenticshop"
PROFILES = SAMPLE / "demo_user_profile.json"
TRAIL = "demo-DEMO-TRAIL-RUNNER"
SEARCH = "http://threads.p2w.test/search?q=trail+running"
PICKS = [
    {"product_name": "Ridgeline", "product_url": "http://threads.p2w.test/product/thr-a31", "reasoning": "a"},
    {"product_name": "Gone", "product_url": "http://threads.p2w.test/product/thr-gone", "reasoning": "b"},
    {"product_name": "More", "product_url": SEARCH, "reasoning": "c"},
    {"product_name": "Fourth", "product_url": "http://threads.p2w.test/product/thr-a32", "reasoning": "d"},
]


def invoke(db: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def shop_reply(request: dict) -> Text:
    """Planner: search the shop, then answer with four picks; judges: every item holds on product pages only."""
    if request.get("response_format"):
        schema, user = request["response_format"]["json_schema"], last_user_message(request)
        if schema["name"] == "ProductInfo":
            return Text(json.dumps({"name": "", "description": "a list of trail running shoes"}))
        status = "FAIL" if "search?q=" in user else "SUCCESS"
        verdict = {"status": status, "evidence": "", "reasoning": "scripted"}
        return Text(json.dumps({name: verdict for name in schema["schema"]["properties"]}))
    assert PLANNER_MARKER in system_message(request)
    if "search?q=" not in last_user_message(request):
        return Text(f"Thought: search first\nAction: ```goto [{SEARCH}]```")
    answer = json.dumps({"search_results": PICKS})
    return Text(f"Thought: these fit\nAction: ```stop [{answer}]```")


def test_profiles_become_curation_tasks_with_the_narrative() -> None:
    (trail, rain) = curation_tasks(PROFILES, "http://threads.p2w.test/").tasks.values()
    profile = load_profiles(PROFILES)[0]
    assert (trail.task_id, trail.persona, trail.query_set, trail.start_url) == (
        TRAIL,
        "DEMO-TRAIL-RUNNER",
        "categorical",
        "http://threads.p2w.test/",
    )
    assert rain.task_id == "demo-DEMO-RAIN-COMMUTER"
    for text in (profile.user_query, profile.situation.rstrip("."), profile.user_context.brand_preferences):
        assert text in trail.intent
    assert '"search_results"' in trail.intent and "top 3 products" in trail.intent


@pytest.mark.slow
def test_recorded_curation_judged_by_the_agenticshop_judges(tmp_path: Path, scripted_llm: ScriptedLlm) -> None:
    scripted_llm.handle_with(shop_reply)
    db = tmp_path / "rec.db"
    llm = ("--base-url", scripted_llm.base_url, "--api-key", "k")
    code, out, err = invoke(
        db, "record", "--profiles", str(PROFILES), "--task", TRAIL, "--model", "m", "--label", "shop", *llm
    )
    assert code == 0, err
    assert "1 answered" in out
    planner = [r for r in scripted_llm.chat_requests if PLANNER_MARKER in system_message(r)]
    assert len(planner) == 2
    assert "Has bought Ridgeline trail shoes twice" in last_user_message(planner[0])
    assert "History access is disabled" in system_message(planner[0])

    code, shown, _ = invoke(db, "show", "shop", TRAIL, "--json")
    events = [json.loads(line) for line in shown.splitlines()]
    started = next(e["payload"] for e in events if e["type"] == "episode.started")
    assert (started["scheme"], started["query_set"]) == ("no-history", "categorical")
    captures = [e["payload"] for e in events if e["type"] == "page.capture"]
    assert [(c["index"], c["requested_url"], c["status"]) for c in captures] == [
        (i, p["product_url"], s) for i, (p, s) in enumerate(zip(PICKS, (200, 404, 200), strict=False))
    ], "the first three links, as the reference judges"

    code, out, err = invoke(db, "rerun", "shop", "--json")
    assert code == 0 and json.loads(out)["identical"], out + err  # today's agent, offline, makes the same episode
    code, out, err = invoke(db, "record", "--resume", "shop", *llm)
    assert code == 0, err  # the profiles and start URL come back from run.started, not the default --tasks
    assert "0 episodes, 1 kept from before" in out
    code, _, err = invoke(db, "record", "--resume", "shop", "--start-url", "http://basket.p2w.test/", *llm)
    assert code == 1 and "--start-url http://basket.p2w.test/ (recorded: http://threads.p2w.test/)" in err

    scripted_llm.reset()
    scripted_llm.handle_with(shop_reply)
    judges = ("--judge", "attribution", "--judge", "hit-ratio", "--judge", "agenticshop-checklist")
    judges += ("--judge", "agenticshop-extract")
    code, _, err = invoke(db, "replay", "shop", *judges, "--profiles", str(PROFILES), *llm, "--concurrency", "1")
    assert code == 0, err
    got = judgments(db)
    assert set(got) == {(TRAIL, j) for j in judges if j != "--judge"}
    assert got[(TRAIL, "agenticshop-extract")].points == {"extracted.0": 1.0, "extracted.1": 0.0, "extracted.2": 0.0}
    assert got[(TRAIL, "attribution")].evidence["attribution.1"].note == "invalid: HTTP 404"
    code, out, err = invoke(db, "metrics", "shop", "--judge", "agenticshop-checklist", "--format", "json")
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    (cell,) = [r for r in rows if r["table"] == "by_variant" and r["variant"] == "demo"]
    assert cell["intent"] == "categorical" and cell["users"] == 1
    assert cell["score"] == pytest.approx(1 / 3)  # every item on the product page, none on the 404 or listing
    assert cell["score_valid"] == 1.0 and cell["hit_ratio"] == pytest.approx(1 / 3)
    assert (cell["valid"], cell["invalid"], cell["irrelevant"]) == pytest.approx((1 / 3, 1 / 3, 1 / 3))
    code, table, _ = invoke(db, "metrics", "shop")
    assert code == 0 and "AgenticShop: score by query variant" in table


def test_profiles_refuse_a_history_scheme(tmp_path: Path) -> None:
    db = tmp_path / "no.db"
    result = CliRunner().invoke(
        main,
        ["--db", str(db), "record", "--profiles", str(PROFILES), "--scheme", "on-demand", "--model", "m"],
    )
    assert result.exit_code == 2 and "--scheme no-history" in result.output
    assert not db.exists()


def test_a_bad_profile_is_one_error_naming_file_user_and_field(tmp_path: Path) -> None:
    profiles = json.loads(PROFILES.read_text())
    del profiles[1]["user_query"]
    bad = tmp_path / "demo_user_profile.json"
    bad.write_text(json.dumps(profiles))
    db = tmp_path / "bad.db"
    result = CliRunner().invoke(main, ["--db", str(db), "record", "--profiles", str(bad), "--model", "m"])
    assert result.exit_code == 1
    (line,) = result.stderr.strip().splitlines()
    assert str(bad) in line and "DEMO-RAIN-COMMUTER" in line and "user_query" in line
    assert not db.exists(), "nothing recorded before the error"


def test_start_url_needs_profiles_and_profiles_exclude_tasks(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["--db", str(tmp_path / "x.db"), "record", "--start-url", "http://threads.p2w.test/", "--model", "m"]
    )
    assert result.exit_code == 2 and "--profiles" in result.output
    both = ["record", "--profiles", str(PROFILES), "--tasks", "sample", "--model", "m"]
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "x.db"), *both])
    assert result.exit_code == 2 and "either --tasks" in result.output
    assert not (tmp_path / "x.db").exists()
