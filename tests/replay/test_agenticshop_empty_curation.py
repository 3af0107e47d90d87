"""An AgenticShop user whose curation has no product, through ``p2w-rt``: every judge says so, and the tables leave
the user out of the means and count them, as the reference does (``run_pipeline.py`` evaluates nothing for an empty
``search_results``, ``collect_results.py`` averages over the users it evaluated)."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.replay.judges import judgment_stream
from p2w_rt.schemas import NewEvent
from p2w_runtime.domain import list_runs
from p2w_runtime.store import open_store
from p2w_runtime.testing import ScriptedLlm
from tests.helpers.paths import REPO
from tests.helpers.stored_judgments import judgments

PROFILES = REPO / "p2w_runtime" / "demo" / "sites" / "agenticshop" / "demo_user_profile.json"
TRAIL, RAIN = "demo-DEMO-TRAIL-RUNNER", "demo-DEMO-RAIN-COMMUTER"
NO_PRODUCTS = "curated no products: the answer links none"
JUDGES = ("attribution", "hit-ratio", "agenticshop-extract", "agenticshop-checklist")
PRODUCT = {
    "@type": "Product",
    "name": "Ridgeline Men's Trail Running Shoes",
    "brand": "Ridgeline",
    "category": "Shoes",
    "description": "Trail running shoes with a grippy outsole",
}
EMPTY = {"user": "DEMO-RAIN-COMMUTER", "search_results": [], "error": "the search model returned no products"}


def invoke(db: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def curate(tmp_path: Path, db: Path, results: list[dict]) -> tuple[int, str, str]:
    """Import ``results`` with one captured product page (the trail runner's, a Ridgeline trail running shoe)."""
    path = tmp_path / "search_output.json"
    path.write_text(json.dumps(results))
    folder = tmp_path / "captures"
    folder.mkdir(exist_ok=True)
    (folder / "p.html").write_text(
        f'<html><body><script type="application/ld+json">{json.dumps(PRODUCT)}</script></body></html>'
    )
    (folder / "captures.jsonl").write_text(
        json.dumps({"url": "https://shop.example/p/1", "status": 200, "html": "p.html"})
    )
    args = ("import-curation", str(path), "--profiles", str(PROFILES), "--captures", str(folder))
    return invoke(db, *args, "--label", "curated")


def every_item_satisfied(request: dict) -> str:
    schema = request["response_format"]["json_schema"]["schema"]
    return json.dumps({name: {"status": "SUCCESS", "reasoning": "scripted"} for name in schema["properties"]})


def replay_args(llm: ScriptedLlm) -> list[str]:
    judges = [arg for judge in JUDGES for arg in ("--judge", judge)]
    return [*judges, "--profiles", str(PROFILES), "--base-url", llm.base_url, "--api-key", "k"]


def replay(db: Path, llm: ScriptedLlm) -> tuple[int, str, str]:
    return invoke(db, "replay", "curated", *replay_args(llm))


def test_an_empty_curation_is_said_and_left_out_of_the_means(tmp_path: Path, scripted_llm: ScriptedLlm) -> None:
    db = tmp_path / "shop.db"
    product = {"product_name": "Ridgeline", "product_url": "https://shop.example/p/1"}
    code, out, err = curate(tmp_path, db, [{"user": "DEMO-TRAIL-RUNNER", "search_results": [product]}, EMPTY])
    assert code == 0, err
    assert out.startswith("imported curated as run ")
    assert "1 of 2 users curated no products (judged as such and left out of the means" in err and RAIN in err

    scripted_llm.handle_with(every_item_satisfied)
    code, out, err = replay(db, scripted_llm)
    assert code == 1  # a user without products has no figure: a failed judgment, never a 0
    assert f"4 results failed with: {NO_PRODUCTS}\n" in err
    assert "page captures" not in out + err
    assert len(scripted_llm.chat_requests) == 1, "the empty curation costs no model call (the trail runner's does)"
    got = judgments(db)
    assert {j: (got[(RAIN, j)].status, got[(RAIN, j)].error) for j in JUDGES} == dict.fromkeys(
        JUDGES, ("failed", NO_PRODUCTS)
    )
    assert got[(TRAIL, "agenticshop-checklist")].metrics["score"] == 1.0

    code, out, err = invoke(db, "metrics", "curated", "--judge", "agenticshop-checklist", "--format", "json")
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    cells = {(r["variant"], r["intent"]): r for r in rows if r["table"] == "by_variant"}
    overall = cells[("all", "all")]
    assert (overall["users"], overall["no_products"]) == (2, 1)
    assert (overall["score"], overall["hit_ratio"], overall["hit_users"]) == (1.0, 1.0, 1)  # over the trail runner
    rain = cells[("demo", "attribute_specific")]
    assert (rain["users"], rain["no_products"], rain["score"], rain["hit_ratio"]) == (1, 1, None, None)
    users = {r["user"]: (r["hit_ratio"], r["not_computed"]) for r in rows if r["table"] == "hit_ratio"}
    assert users == {TRAIL: (1.0, ""), RAIN: (None, NO_PRODUCTS)}
    code, out, _ = invoke(db, "metrics", "curated")
    assert code == 0 and "no_products" in out and "curated none, left out of the means" in out


def test_a_run_judged_by_the_checklist_alone_counts_who_curated_nothing(
    tmp_path: Path, scripted_llm: ScriptedLlm
) -> None:
    db = tmp_path / "shop.db"
    product = {"product_name": "Ridgeline", "product_url": "https://shop.example/p/1"}
    assert curate(tmp_path, db, [{"user": "DEMO-TRAIL-RUNNER", "search_results": [product]}, EMPTY])[0] == 0
    scripted_llm.handle_with(every_item_satisfied)
    llm = ("--base-url", scripted_llm.base_url, "--api-key", "k")
    code, out, _ = invoke(
        db, "replay", "curated", "--judge", "agenticshop-checklist", "--profiles", str(PROFILES), *llm
    )
    assert code == 1 and f"{RAIN}  agenticshop-checklist: {NO_PRODUCTS}" in out
    code, out, err = invoke(db, "metrics", "curated", "--format", "json")
    assert code == 0, err
    overall = next(json.loads(line) for line in out.splitlines() if '"variant": "all"' in line)
    assert (overall["users"], overall["no_products"], overall["score"]) == (2, 1, 1.0)


OLD_VERSIONS = {"attribution": "1", "hit-ratio": "3"}
"""The rules judges' versions that judged an empty curation as "no page captures: it was not recorded or imported as
a curation". The LLM judges kept theirs: a bump would make the next ``replay`` pay the model again for every product
of every user, to reword a failure that cost no call; ``--retry-failed`` rewords it."""


def test_what_the_previous_versions_said_of_an_empty_curation_is_judged_again(
    tmp_path: Path, scripted_llm: ScriptedLlm
) -> None:
    db = tmp_path / "shop.db"
    assert curate(tmp_path, db, [EMPTY])[0] == 0
    now = tmp_path / "now.db"
    shutil.copy(db, now)
    assert replay(now, scripted_llm)[0] == 1
    made_now = judgments(now)
    before = "has no page captures: it was not recorded or imported as a curation"

    async def judged_by_the_previous_versions() -> None:
        async with open_store(db) as store:
            (run, *_) = await list_runs(store)
            old = [
                j.model_copy(
                    update={
                        "judge_version": OLD_VERSIONS.get(j.judge_id, j.judge_version),
                        "error": f"episode {j.episode_stream} {before}",
                    }
                )
                for j in made_now.values()
            ]
            await store.append([NewEvent(stream=judgment_stream(run.run_id), payload=j) for j in old])

    asyncio.run(judged_by_the_previous_versions())
    code, _, err = replay(db, scripted_llm)
    assert code == 1 and f"2 results failed with: {NO_PRODUCTS}\n" in err
    errors = {j: judgments(db)[(RAIN, j)].error or "" for j in JUDGES}
    assert errors["attribution"] == errors["hit-ratio"] == NO_PRODUCTS
    assert before in errors["agenticshop-extract"] and before in errors["agenticshop-checklist"]
    code, _, err = invoke(db, "replay", "curated", *replay_args(scripted_llm), "--retry-failed")
    assert code == 1 and f"4 results failed with: {NO_PRODUCTS}\n" in err and "page captures" not in err
    assert {j: judgments(db)[(RAIN, j)].error for j in JUDGES} == dict.fromkeys(JUDGES, NO_PRODUCTS)
    assert scripted_llm.chat_requests == []
