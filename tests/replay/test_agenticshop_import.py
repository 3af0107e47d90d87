"""`p2w-rt import-curation` from a captures folder, and the files it refuses (nothing written before it fails)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.replay.judges import read_judgments
from p2w_runtime.domain import list_runs
from p2w_runtime.store import MAX_EVENT_BYTES, open_store
from p2w_runtime.testing import ScriptedLlm, Text
from tests.helpers.paths import REPO

SAMPLE = REPO / "p2w_runtime" / "demo" / "sites" / "agenticshop"
PROFILES = SAMPLE / "demo_user_profile.json"
PRODUCT = {"@type": "Product", "name": "Northloop Packable Rain Jacket", "brand": "Northloop", "category": "Jackets"}


def invoke(db: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def runs(db: Path) -> int:
    async def count() -> int:
        async with open_store(db, create=True) as store:
            return len(await list_runs(store))

    return asyncio.run(count())


def write(tmp_path: Path, results: object, manifest: list[dict | str] | None) -> tuple[Path, Path]:
    """The results file and a captures folder; a manifest line given as text is written as it is."""
    path = tmp_path / "out.json"
    path.write_text(json.dumps(results))
    folder = tmp_path / "captures"
    folder.mkdir(exist_ok=True)
    (folder / "p.html").write_text(
        f'<html><body><script type="application/ld+json">{json.dumps(PRODUCT)}</script></body></html>'
    )
    if manifest is not None:
        lines = (m if isinstance(m, str) else json.dumps(m) for m in manifest)
        (folder / "captures.jsonl").write_text("\n".join(lines) + "\n")
    return path, folder


RESULT = {
    "user": "DEMO-RAIN-COMMUTER",
    "search_results": [
        {"product_name": "Jacket", "product_url": "https://shop.example/p/1"},
        {"product_name": "Gone", "product_url": "https://shop.example/p/2"},
    ],
}


def test_captures_folder_then_attribution_offline(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    manifest = [{"url": "https://shop.example/p/1", "status": 200, "html": "p.html"}]
    results, folder = write(tmp_path, [RESULT], manifest)
    args = ("import-curation", str(results), "--profiles", str(PROFILES), "--captures", str(folder))
    code, out, err = invoke(db, *args, "--label", "cap")
    assert code == 0, err
    code, _, err = invoke(
        db, "replay", "cap", "--judge", "attribution", "--judge", "hit-ratio", "--profiles", str(PROFILES)
    )
    assert code == 0, err

    async def read() -> dict:
        async with open_store(db) as store:
            run_id = (await list_runs(store))[0].run_id
            return {r.judgment.judge_id: r.judgment for r in await read_judgments(store, run_id)}

    got = asyncio.run(read())
    notes = {k: e.note for k, e in got["attribution"].evidence.items()}
    assert notes == {
        "attribution.0": "valid: product page (schema.org Product)",
        "attribution.1": "invalid: no page recorded (not captured (imported without a page capture))",
    }
    assert got["hit-ratio"].points == {"hit.0": 1.0, "hit.1": 0.0}


@pytest.mark.parametrize(
    ("results", "manifest", "message"),
    [
        ([{**RESULT, "user": "NOBODY"}], [], "[0] field 'user': NOBODY has no profile"),
        ([RESULT], [{"url": "https://shop.example/p/1", "html": "../../etc/passwd"}], "field 'html'"),
        ([RESULT], [{"url": "https://shop.example/p/1", "html": "missing.html"}], "no file"),
        ([RESULT], [{"url": "https://shop.example/p/1", "status": 999}], "field 'status': 999"),
        ([RESULT], [{"status": 200}], "captures.jsonl:1: field 'url' is missing"),
        ([{"search_results": []}], [], "[0]: user: Field required"),
        ({"user": "x"}, [], "expected a JSON list of curated results"),
        # a second answer for one user was stored as a second attempt of its episode, the first one dropped
        ([RESULT, RESULT], [], "out.json: [1] field 'user': DEMO-RAIN-COMMUTER is also at [0]"),
        # each once a traceback, the three lone surrogates after run.started: an unfinished run kept the label
        (
            [{**RESULT, "search_results": [{"product_name": "J\udc00", "product_url": "https://shop.example/p/1"}]}],
            [],
            "out.json: field [0].search_results[0].product_name: lone surrogate '\\udc00' at character 1",
        ),
        ([RESULT], [{"url": "https://shop.example/p/1", "final_url": "https://shop.example/\ud800"}],
         "captures.jsonl:1: field final_url: lone surrogate '\\ud800' at character 21"),
        ([RESULT], ['{"url": "https://shop.example/p/1", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"],
         "captures.jsonl:1: invalid JSON: nested more than 64 levels deep"),
        ([RESULT], ['{"url": "https://shop.example/p/1", "status": ' + "9" * 5000 + "}"],
         "captures.jsonl:1: field status: Infinity (or a number too large for a float) is not a finite number"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_writes_nothing(
    tmp_path: Path, results: object, manifest: list, message: str
) -> None:
    db = tmp_path / "bad.db"
    path, folder = write(tmp_path, results, manifest)
    code, _, err = invoke(
        db, "import-curation", str(path), "--profiles", str(PROFILES), "--captures", str(folder), "--label", "x"
    )
    assert code == 1 and message in err and len(err.strip().splitlines()) == 1, err
    assert runs(db) == 0


def test_a_result_over_the_event_limit_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "bad.db"
    product = {"product_name": "Jacket", "product_url": "https://shop.example/p/1", "reasoning": "x" * MAX_EVENT_BYTES}
    path, _ = write(tmp_path, [{**RESULT, "search_results": [product]}], None)
    code, _, err = invoke(db, "import-curation", str(path), "--profiles", str(PROFILES), "--label", "x")
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert f"{path}: user DEMO-RAIN-COMMUTER: field episode.finished." in err and "over the 16 MiB limit" in err
    assert runs(db) == 0, "checked before run.started: no unfinished run keeps the label"


def test_a_lone_surrogate_in_a_profile_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "bad.db"
    profiles = tmp_path / "demo_user_profile.json"
    data = json.loads(PROFILES.read_text())
    data[1]["user_query"] = "rain \ud800 jacket"
    profiles.write_text(json.dumps(data))
    path, _ = write(tmp_path, [RESULT], None)
    code, _, err = invoke(db, "import-curation", str(path), "--profiles", str(profiles), "--label", "x")
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert f"{profiles}: field [1].user_query: lone surrogate '\\ud800' at character 5" in err
    assert runs(db) == 0


def test_extract_by_rule_or_llm_and_a_failing_checklist_model(tmp_path: Path, scripted_llm: ScriptedLlm) -> None:
    db = tmp_path / "x.db"
    manifest = [
        {"url": "https://shop.example/p/1", "status": 200, "html": "p.html"},
        {"url": "https://shop.example/p/2", "status": 200, "html": "plain.html"},
    ]
    results, folder = write(tmp_path, [RESULT], manifest)
    (folder / "plain.html").write_text("<html><body><h1>Cascade Shell</h1><p>Waterproof, $129</p></body></html>")
    assert (
        invoke(
            db, "import-curation", str(results), "--profiles", str(PROFILES), "--captures", str(folder), "--label", "x"
        )[0]
        == 0
    )
    scripted_llm.handle_with(lambda request: json.dumps({"name": "Cascade Shell", "price": 129, "brand": "Cascade"}))
    llm = ("--base-url", scripted_llm.base_url, "--api-key", "k")
    code, out, err = invoke(db, "replay", "x", "--judge", "agenticshop-extract", "--json", *llm)
    assert code == 0, err
    (row,) = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert row["evidence"]["extracted.0"]["note"] == "rules (schema.org Product)"  # no model call for p/1
    assert json.loads(row["evidence"]["extracted.1"]["text"])["brand"] == "Cascade"
    assert len(scripted_llm.chat_requests) == 1 and "Waterproof, $129" in json.dumps(scripted_llm.chat_requests[0])
    # the checklist model answers garbage every time: a failed judgment, kept, exit code 1
    scripted_llm.handle_with(lambda request: Text("I would rather not say."))
    code, _, err = invoke(db, "replay", "x", "--judge", "agenticshop-checklist", "--profiles", str(PROFILES), *llm)
    assert code == 1 and "failed 1" in err


def test_dry_run_counts_one_checklist_call_per_answered_page(tmp_path: Path) -> None:
    db = tmp_path / "d.db"
    results, folder = write(tmp_path, [RESULT], [{"url": "https://shop.example/p/1", "status": 200, "html": "p.html"}])
    assert (
        invoke(
            db, "import-curation", str(results), "--profiles", str(PROFILES), "--captures", str(folder), "--label", "d"
        )[0]
        == 0
    )
    code, out, err = invoke(
        db, "replay", "d", "--judge", "agenticshop-checklist", "--profiles", str(PROFILES), "--dry-run", "--json"
    )
    assert code == 0, err
    (row,) = [json.loads(line) for line in out.splitlines()]
    assert (row["llm_calls"], row["episodes"]) == (1, 1)  # the uncaptured second link costs nothing
    assert row["prompt_tokens"] > 0 and row["completion_tokens"] == 40 * 8  # eight checklist items


def test_checklist_samples_and_their_self_agreement(tmp_path: Path, scripted_llm: ScriptedLlm) -> None:
    db = tmp_path / "s.db"
    results, folder = write(tmp_path, [RESULT], [{"url": "https://shop.example/p/1", "status": 200, "html": "p.html"}])
    assert (
        invoke(
            db, "import-curation", str(results), "--profiles", str(PROFILES), "--captures", str(folder), "--label", "s"
        )[0]
        == 0
    )
    calls = {"n": 0}

    def moody(request: dict) -> str:  # the second sample says FAIL to the brand item
        calls["n"] += 1
        props = request["response_format"]["json_schema"]["schema"]["properties"]
        fail = calls["n"] == 2
        return json.dumps(
            {k: {"status": "FAIL" if fail and k.startswith("brand") else "SUCCESS", "evidence": ""} for k in props}
        )

    scripted_llm.handle_with(moody)
    llm = ("--base-url", scripted_llm.base_url, "--api-key", "k", "--concurrency", "1")
    code, _, err = invoke(
        db, "replay", "s", "--judge", "agenticshop-checklist", "--samples", "2", "--profiles", str(PROFILES), *llm
    )
    assert code == 0, err
    assert len(scripted_llm.chat_requests) == 2  # one answered page, two samples: two recorded calls
    code, out, err = invoke(db, "agree", "s", "--judge", "agenticshop-checklist", "--json", "--bootstrap", "0")
    assert code == 0, err
    (sc,) = json.loads(out)["self_consistency"]
    assert (sc["episodes"], sc["samples"], sc["flipped"]) == (1, 2, [])  # no success verdict in AgenticShop
    assert set(sc["alpha"]) >= {"metric:score", "dimension:brand_preferences", "point:brand_preferences.0.0"}
