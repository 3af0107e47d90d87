"""`p2w-rt replay` and `p2w-rt metrics` end to end through the CLI, on a real store file."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.replay.derived import family
from p2w_rt.replay.judges import judgment_stream, read_judgments
from p2w_runtime.store import open_store
from p2w_runtime.testing import HttpError, ScriptedLlm
from tests.helpers.builders import build

KEYS = {"task_id", "judge", "p_web", "p_pref", "p_avg", "intent", "success", "points", "evidence"}

RULES = f"rubric-rules@{family('judge').get('rubric-rules').version}"
"""The judge the tables name, at its installed version."""


def invoke(db: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def cached_lines(text: str) -> int:
    return sum(line.startswith("cached ") for line in text.splitlines())


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def test_replay_json_then_cached(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    build(db)
    code, out, err = invoke(db, "replay", "cli-run", "--judge", "rubric-rules", "--json")
    assert code == 0, err
    rows = json_lines(out)
    assert [r["task_id"] for r in rows] == ["Alex_Garcia_A3", "Alex_Garcia_A1", "Alex_Garcia_B1"]
    assert all(set(r) >= KEYS for r in rows)
    first, failed_intent = rows[0], rows[2]
    assert (first["p_web"], first["p_pref"], first["p_avg"], first["intent"], first["success"]) == (
        1.0,
        1.0,
        1.0,
        1.0,
        True,
    )
    assert failed_intent["intent"] == 0.0 and failed_intent["success"] is False
    assert first["points"]["pref.2.utilization"] == 2.5
    assert first["evidence"]["pref.1.retrieval"]["text"] == "32x32"
    assert "judged 3, cached 0, failed 0" in err

    code, out, err = invoke(db, "replay", "cli-run", "--judge", "rubric-rules")
    assert code == 0 and cached_lines(out) == 3 and "judged 0, cached 3" in err


def test_several_judges_at_once_and_force(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    run_id = build(db)
    code, out, _ = invoke(db, "replay", run_id, "--judge", "rubric-rules", "--judge", "outcome-based-rules", "--json")
    assert code == 0 and sorted({r["judge"] for r in json_lines(out)}) == ["outcome-based-rules", "rubric-rules"]
    code, _, err = invoke(db, "replay", run_id, "--judge", "rubric-rules", "--force")
    assert code == 0 and "judged 3, cached 0" in err

    async def count() -> int:
        async with open_store(db) as store:
            return len(await read_judgments(store, run_id))

    assert asyncio.run(count()) == 9


def test_user_errors_are_one_line(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    build(db)
    code, out, err = invoke(db, "replay", "cli-run", "--judge", "nope")
    assert code == 1 and err.strip().startswith("error: unknown judge 'nope'") and len(err.strip().splitlines()) == 1
    code, _, err = invoke(db, "replay", "no-such-run", "--judge", "rubric-rules")
    assert code != 0 and "no run 'no-such-run'" in err and "Traceback" not in err
    code, _, err = invoke(db, "replay", "cli-run", "--judge", "webarena")
    assert code == 1 and "--webarena-config" in err
    code, _, err = invoke(db, "metrics", "cli-run", "--by", "colour")
    assert code == 1 and "unknown column(s) colour" in err


def test_dry_run_calls_and_appends_nothing(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    run_id = build(db)
    code, out, _ = invoke(
        db, "replay", "cli-run", "--judge", "rubric-llm", "--judge", "rubric-rules", "--dry-run", "--json"
    )
    assert code == 0
    llm, rules = json_lines(out)
    assert (llm["judge"], llm["llm_calls"], llm["episodes"]) == ("rubric-llm", 3, 3)
    assert llm["cost_usd"] > 0 and rules["llm_calls"] == 0

    async def head() -> object:
        async with open_store(db) as store:
            return await store.stream_head(judgment_stream(run_id))

    assert asyncio.run(head()) is None


def test_llm_judge_through_the_cli_and_its_cache(tmp_path: Path, scripted_llm: ScriptedLlm) -> None:
    def reply(request: dict) -> str:
        props = request["response_format"]["json_schema"]["schema"]["properties"]
        top = {"web": 5, "pref": 2.5, "intent": 10}
        return json.dumps({k: {"score": top[k.split("_")[0]], "justification": "ok"} for k in props})

    scripted_llm.handle_with(reply)
    db = tmp_path / "r.db"
    build(db)
    args = ("replay", "cli-run", "--judge", "rubric-llm", "--base-url", scripted_llm.base_url, "--api-key", "k-123")
    code, out, err = invoke(db, *args, "--json")
    assert code == 0, err
    # the model gives full marks; Alex_Garcia_B1 ended at the step limit without an answer, so no Intent, no success.
    # JSON lines stream as judgments land, in the order the concurrent LLM calls finish: compared by task
    success = {r["task_id"]: r["success"] for r in json_lines(out)}
    assert success == {"Alex_Garcia_A3": True, "Alex_Garcia_A1": True, "Alex_Garcia_B1": False}
    assert len(scripted_llm.chat_requests) == 3
    code, out, _ = invoke(db, *args)
    assert code == 0 and cached_lines(out) == 3 and len(scripted_llm.chat_requests) == 3


def test_rejecting_endpoint_is_one_line(tmp_path: Path, scripted_llm: ScriptedLlm) -> None:
    scripted_llm.handle_with(lambda request: HttpError(401, "bad key"))
    db = tmp_path / "r.db"
    build(db)
    code, _, err = invoke(
        db, "replay", "cli-run", "--judge", "rubric-llm", "--base-url", scripted_llm.base_url, "--api-key", "k"
    )
    assert code == 1 and "bad key" in err and "Traceback" not in err


def test_webarena_judge_from_the_cli(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    build(db)
    config = tmp_path / "wa.json"
    config.write_text(
        json.dumps(
            [
                {
                    "task_id": "Alex_Garcia_A3",
                    "intent": "x",
                    "eval": {
                        "eval_types": ["string_match", "url_match"],
                        "reference_answers": {"must_include": ["$59"]},
                        "reference_url": "__SHOPPING__/search?q=chinos 32x32",
                    },
                },
                {
                    "task_id": "Alex_Garcia_A1",
                    "intent": "x",
                    "eval": {"eval_types": ["string_match"], "reference_answers": {"exact_match": "nothing"}},
                },
            ]
        )
    )
    code, out, err = invoke(
        db,
        "replay",
        "cli-run",
        "--judge",
        "webarena",
        "--webarena-config",
        str(config),
        "--site-url",
        "shopping=https://www.kohls.com",
        "--json",
    )
    rows = {r["task_id"]: r for r in json_lines(out)}
    assert code == 1  # Alex_Garcia_B1 has no WebArena config: a failed judgment
    assert rows["Alex_Garcia_A3"]["success"] is True and rows["Alex_Garcia_A1"]["success"] is False
    assert rows["Alex_Garcia_B1"]["status"] == "failed" and "no WebArena config" in rows["Alex_Garcia_B1"]["error"]


def test_metrics_formats_and_plot(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    build(db, label="a", model="gpt-4.1")
    build(db, label="b", model="o3")
    for label in ("a", "b"):
        assert invoke(db, "replay", label, "--judge", "rubric-rules")[0] == 0
    code, out, _ = invoke(db, "metrics", "a", "b", "--format", "json")
    rows = json_lines(out)
    main_rows = [r for r in rows if r["table"] == "main"]
    assert [(r["model"], r["episodes"], r["judged"]) for r in main_rows] == [("gpt-4.1", 3, 3), ("o3", 3, 3)]
    assert main_rows[0]["success_rate"] == 0.666667 and main_rows[0]["intent"] == 0.666667
    assert main_rows[0]["p_web"] == 1.0
    by_level = [(r["model"], r["level"], r["success_rate"]) for r in rows if r["table"] == "by_level"]
    assert by_level == [("gpt-4.1", 0, 1.0), ("gpt-4.1", 2, 0.5), ("o3", 0, 1.0), ("o3", 2, 0.5)]

    code, out, _ = invoke(db, "metrics", "a", "--format", "md")
    assert code == 0
    assert "| architecture | model | scheme | judge | P_web | P_pref | P_avg | Intent | SR | judged |" in out
    assert f"| agentoccam | gpt-4.1 | on-demand | {RULES} | 1.000 | 1.000 | 1.000 | 0.667 | 0.667 | 3/3 |" in out
    code, out, _ = invoke(db, "metrics", "a", "--format", "csv", "--by", "level")
    assert out.splitlines()[:3] == [
        "level,judge,p_web,p_pref,p_avg,intent,success_rate,judged,episodes",
        f"0,{RULES},1.0,1.0,1.0,1.0,1.0,1,1",
        f"2,{RULES},1.0,1.0,1.0,0.5,0.5,2,2",
    ]
    plot = tmp_path / "levels.png"
    code, out, err = invoke(db, "metrics", "a", "b", "--plot", str(plot))
    assert code == 0 and "Table 5 layout" in out and plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
