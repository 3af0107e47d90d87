"""AgenticShop end to end on the demo shop: curated links captured in Chromium, judged offline, tables printed.

The scripted LLM plays the extractor (pages without schema.org data) and the checklist judge.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.domain import episodes_of
from p2w_runtime.domain.trajectory import load_trajectory
from p2w_runtime.store import open_store
from p2w_runtime.testing import ScriptedLlm
from tests.helpers.paths import REPO
from tests.helpers.stored_judgments import judgments

SAMPLE = REPO / "p2w_runtime" / "demo" / "sites" / "agenticshop"
PROFILES = SAMPLE / "demo_user_profile.json"
RESULTS = SAMPLE / "demo_search_output.json"
TRAIL, RAIN = "demo-DEMO-TRAIL-RUNNER", "demo-DEMO-RAIN-COMMUTER"


def invoke(db: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def judge_reply(request: dict) -> str:
    schema = request["response_format"]["json_schema"]
    user = request["messages"][-1]["content"]
    if schema["name"] == "ProductInfo":
        return json.dumps({"name": "", "description": "a list of trail running shoes"})
    listing = "search?q=" in user
    return json.dumps(
        {
            name: {
                "status": "FAIL" if listing else "SUCCESS",
                "evidence": "" if listing else "Free returns and size exchanges within 30 days",
                "reasoning": "scripted",
            }
            for name in schema["schema"]["properties"]
        }
    )


@pytest.mark.slow
def test_curation_captured_judged_and_tabulated(tmp_path: Path, scripted_llm: ScriptedLlm) -> None:
    db = tmp_path / "shop.db"
    code, out, err = invoke(
        db, "import-curation", str(RESULTS), "--profiles", str(PROFILES), "--fetch", "--label", "shop-demo"
    )
    assert code == 0, err

    async def captures() -> dict[str, list]:
        async with open_store(db) as store:
            run_id = out.split()[-1]
            return {
                e.task_id: (await load_trajectory(store, e.stream)).captures for e in await episodes_of(store, run_id)
            }

    pages = asyncio.run(captures())
    trail = pages[TRAIL]
    assert [(c.index, c.status) for c in trail] == [(0, 200), (1, 404), (2, 200)]
    assert trail[0].dom_html and trail[0].screenshot and "thr-a31" in (trail[0].final_url or "")
    assert len(pages[RAIN]) == 2

    scripted_llm.handle_with(judge_reply)
    llm = ("--base-url", scripted_llm.base_url, "--api-key", "k", "--concurrency", "1")
    judges = ("--judge", "attribution", "--judge", "hit-ratio", "--judge", "agenticshop-checklist")
    code, _, err = invoke(db, "replay", "shop-demo", *judges, "--profiles", str(PROFILES), *llm)
    assert code == 0, err
    # checklist: trail = product page (1 call, rules extraction) + 404 (no call) + search page (extract + judge);
    # rain = two product pages
    assert len(scripted_llm.chat_requests) == 5
    got = judgments(db)

    attribution = got[(TRAIL, "attribution")]
    notes = {k: e.note for k, e in attribution.evidence.items()}
    assert notes == {
        "attribution.0": "valid: product page (schema.org Product)",
        "attribution.1": "invalid: HTTP 404",
        "attribution.2": "irrelevant: search results or listing URL",
    }
    assert attribution.metrics["valid"] == pytest.approx(1 / 3)

    assert got[(TRAIL, "hit-ratio")].points == {"hit.0": 1.0, "hit.1": 0.0, "hit.2": 0.0}
    assert got[(RAIN, "hit-ratio")].metrics["hit_ratio"] == 0.5  # Northloop hits, Cascade is another brand

    checklist = got[(TRAIL, "agenticshop-checklist")]
    assert checklist.metrics["score"] == pytest.approx(1 / 3)  # all items on the product, none elsewhere
    assert checklist.metrics["score_valid"] == 1.0
    assert checklist.metrics["dim.brand_preferences"] == pytest.approx(1 / 3)
    assert "without a model call: invalid page (HTTP 404)" in checklist.evidence["brand_preferences.1.0"].note
    assert "quote found on the page" in checklist.evidence["brand_preferences.0.0"].note
    assert got[(RAIN, "agenticshop-checklist")].metrics["score"] == 1.0

    code, out, err = invoke(db, "metrics", "shop-demo", "--judge", "agenticshop-checklist", "--format", "json")
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    by_variant = {(r["variant"], r["intent"]): r for r in rows if r["table"] == "by_variant"}
    assert by_variant[("demo", "categorical")]["score"] == pytest.approx(1 / 3)
    assert by_variant[("demo", "attribute_specific")]["hit_ratio"] == 0.5
    overall = by_variant[("all", "all")]
    assert overall["users"] == 2 and overall["score"] == pytest.approx((1 / 3 + 1) / 2)
    assert overall["invalid"] == pytest.approx(1 / 6, abs=1e-6) and overall["score_valid"] == 1.0
    dims = {r["dimension"]: r["satisfied"] for r in rows if r["table"] == "per_dimension"}
    assert set(dims) == {
        "brand_preferences",
        "price_sensitivity",
        "review_sensitivity",
        "functional_requirements",
        "aesthetic_preferences",
        "purchase_preferences",
    }
    code, table, _ = invoke(db, "metrics", "shop-demo")
    assert code == 0 and "AgenticShop: score by query variant" in table
    assert "Table 5" not in table and "P_web" not in table, "no empty Persona2Web table for an AgenticShop run"

    # judged offline, forever the same: a second pass reuses every judgment and calls nothing
    code, _, _ = invoke(db, "replay", "shop-demo", *judges, "--profiles", str(PROFILES), *llm)
    assert code == 0 and len(scripted_llm.chat_requests) == 5
