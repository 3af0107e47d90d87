"""`p2w-rt export RUN... --format parquet`: five tables read back with pyarrow agree with `metrics` and the log."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from cli import main
from p2w_runtime.domain import episodes_of, find_run
from p2w_runtime.store import open_store
from schemas import LlmCall, LlmUsage, NewEvent


def p2w(db: Path, *args: str) -> str:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


async def _add_llm_calls(db: Path, label: str) -> int:
    """Two planner calls per episode, with usage and cost, as the recorder writes them (before judging)."""
    tokens = 0
    async with open_store(db) as store:
        run = await find_run(store, label)
        for i, ref in enumerate(await episodes_of(store, run.run_id)):
            calls = []
            for n in range(2):
                usage = LlmUsage(prompt_tokens=100 + i, completion_tokens=10 * (n + 1), total_tokens=110 + i + 10 * n)
                tokens += usage.total_tokens
                call = LlmCall(role="planner", model="m", step=1, messages=[], response="ok", usage=usage,
                               latency_s=0.5, fingerprint=f"f{n}", ordinal=0, cost_usd=0.001)  # fmt: skip
                calls.append(NewEvent(stream=ref.stream, payload=call))
            await store.append(calls)
    return tokens


@pytest.fixture
def db(tmp_path: Path) -> tuple[Path, int]:
    path = tmp_path / "runs.db"
    tokens = 0
    for fmt, label in (("p2w-agentoccam", "ao"), ("p2w-browser-use", "bu")):
        p2w(path, "import-trajectories", "--format", fmt, "--examples", "--label", label)
        tokens += asyncio.run(_add_llm_calls(path, label))
        p2w(path, "replay", label, "--judge", "rubric-rules", "--judge", "outcome-based-rules")
        p2w(path, "classify", label)
    return path, tokens


def test_the_tables_agree_with_metrics_and_the_log(db: tuple[Path, int], tmp_path: Path) -> None:
    path, tokens = db
    out = tmp_path / "tables"
    said = p2w(path, "export", "ao", "bu", "--format", "parquet", "-o", str(out))
    assert "episodes 6" in said
    episodes = pq.read_table(out / "episodes.parquet")
    steps = pq.read_table(out / "steps.parquet")
    queries = pq.read_table(out / "history_queries.parquet")
    calls = pq.read_table(out / "llm_calls.parquet")
    judgments = pq.read_table(out / "judgments.parquet")

    metrics = [
        json.loads(line)
        for line in p2w(path, "metrics", "ao", "bu", "--by", "run,judge", "--format", "json").splitlines()
    ]
    main_rows = [m for m in metrics if m["table"] == "main"]
    for m in main_rows:
        rows = judgments.filter(
            pc.and_(pc.equal(judgments["label"], m["run"]), pc.equal(judgments["judge_id"], m["judge"]))
        )
        assert rows.num_rows == m["judged"]
        for figure in ("p_web", "p_pref", "p_avg", "intent"):
            assert pc.mean(rows[figure]).as_py() == pytest.approx(m[figure], abs=1e-6)  # JSON figures have 6 places
        assert pc.mean(rows["success"]).as_py() == pytest.approx(m["success_rate"], abs=1e-6)
    assert episodes.num_rows == 6 == sum(m["episodes"] for m in main_rows if m["judge"] == "rubric-rules")
    assert judgments.num_rows == 12
    assert sorted(set(episodes["judges"].to_pylist()[0])) == ["outcome-based-rules", "rubric-rules"]
    assert all("rules" in labels for labels in (dict(x) for x in episodes["labels"].to_pylist()))

    assert steps.num_rows == pc.sum(episodes["actions"]).as_py()
    assert queries.num_rows == pc.sum(episodes["history_queries"]).as_py()
    assert pc.sum(queries["hit_count"]).as_py() == sum(len(h) for h in queries["hits"].to_pylist()) > 0
    assert calls.num_rows == 12 == pc.sum(episodes["llm_calls"]).as_py()
    assert pc.sum(calls["total_tokens"]).as_py() == tokens
    assert pc.sum(calls["cost_usd"]).as_py() == pytest.approx(0.012)
    assert pc.all(calls["counted"]).as_py()
    first = judgments.to_pylist()[0]
    assert first["points"] and all(p["points"] <= p["max_points"] for p in first["points"])


def test_unknown_runs_and_an_occupied_folder_are_refused_before_writing(db: tuple[Path, int], tmp_path: Path) -> None:
    path, _ = db
    out = tmp_path / "tables"
    missing = CliRunner().invoke(
        main, ["--db", str(path), "export", "ao", "nope", "--format", "parquet", "-o", str(out)]
    )
    assert missing.exit_code != 0 and "nope" in missing.output and not out.exists()
    p2w(path, "export", "ao", "--format", "parquet", "-o", str(out))
    again = CliRunner().invoke(main, ["--db", str(path), "export", "ao", "--format", "parquet", "-o", str(out)])
    assert again.exit_code != 0 and "--force" in again.output
    assert "episodes 3" in p2w(path, "export", "ao", "--format", "parquet", "-o", str(out), "--force")
    two = CliRunner().invoke(main, ["--db", str(path), "export", "ao", "bu", "-o", str(tmp_path / "x.p2w")])
    assert two.exit_code == 2 and "one RUN" in two.output
