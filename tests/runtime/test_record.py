"""`p2w-rt record` end to end: the agent in real headless Chromium on the demo sites, the scripted LLM as endpoint."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.data import load_tasks
from p2w_runtime.demo.sample import sample_checks, sample_tasks_dir
from p2w_runtime.store import open_store
from p2w_runtime.testing import ScriptedLlm
from p2w_runtime.testing.sample_agent import SampleAgentScript

API_KEY = "sk-test-4f1c9a7e2b8d4c6f9e0a1b2c3d4e5f60"


@pytest.fixture
def agent_llm(scripted_llm: ScriptedLlm) -> ScriptedLlm:
    scripted_llm.handle_with(SampleAgentScript(load_tasks(sample_tasks_dir()), sample_checks()))
    return scripted_llm


def record(db: Path, llm: ScriptedLlm, *args: str):
    return CliRunner().invoke(
        main,
        [
            "--db",
            str(db),
            "record",
            "--model",
            "scripted-model",
            "--base-url",
            llm.base_url,
            "--api-key",
            API_KEY,
            *args,
        ],
        catch_exceptions=False,
    )


def events(db: Path, task_id: str) -> list[dict]:
    shown = CliRunner().invoke(main, ["--db", str(db), "show", _only_run(db), task_id, "--json"])
    assert shown.exit_code == 0, shown.output
    return [json.loads(line) for line in shown.output.splitlines()]


async def blob(db: Path, sha256: str) -> bytes:
    async with open_store(db) as store:
        return await store.get_blob(sha256)


def _only_run(db: Path) -> str:
    runs = CliRunner().invoke(main, ["--db", str(db), "runs", "--json"])
    (run,) = [json.loads(line) for line in runs.output.splitlines()]
    return run["run_id"]


def test_on_demand_episode_asks_history_then_navigates(tmp_path: Path, agent_llm: ScriptedLlm) -> None:
    db = tmp_path / "rec.db"
    result = record(db, agent_llm, "--task", "Priya_Raman_A1", "--scheme", "on-demand", "--label", "december")
    assert result.exit_code == 0, result.output
    assert "1 answered" in result.output
    timeline = events(db, "Priya_Raman_A1")
    types = [e["type"] for e in timeline]
    assert types[0] == "episode.started" and types[-2:] == ["final_state", "episode.finished"]
    # history query -> retrieval (caused by the query) -> generator rationale (caused by the retrieval)
    first_query = types.index("history.query")
    assert types[first_query + 1] == "history.retrieval"
    query, retrieval = timeline[first_query], timeline[first_query + 1]
    assert retrieval["causation_id"] == query["event_id"]
    assert retrieval["payload"]["hits"], "the sample history answers the website question"
    answers = [e for e in timeline if e["type"] == "rationale" and e["payload"]["source"] == "generator"]
    assert answers and "threads.p2w.test" in answers[0]["payload"]["text"]
    roles = [e["payload"]["role"] for e in timeline if e["type"] == "llm.call"]
    assert {"planner", "generator"} <= set(roles)
    # the agent searched with the filters, opened the best match, chose size M and stopped on the cart with it
    finished = timeline[-1]["payload"]
    target = sample_checks()["Priya_Raman_A"]["target_url"]
    assert finished["end_reason"] == "answered" and finished["final_url"] == "http://threads.p2w.test/cart"
    assert "Stride Women's High-Rise Running Leggings Size M · Qty 1" in finished["answer"]
    observations = [e["payload"]["url"] for e in timeline if e["type"] == "observation"]
    assert observations[0] == "http://search.p2w.test/" and target in observations
    assert "http://threads.p2w.test/product/thr-a01" in observations
    final = timeline[-2]["payload"]
    assert final["dom_html"] and final["har"] and final["screenshot"]
    cart = asyncio.run(blob(db, final["dom_html"])).decode()
    assert 'data-product-id="thr-a01"' in cart and "Size M · Qty 1" in cart, "the final page is the cart holding it"
    verified = json.loads(CliRunner().invoke(main, ["--db", str(db), "verify", "--json"]).stdout)
    assert verified["ok"] and (verified["seals"], verified["unsealed"]) == (2, [])  # episode.sealed, run.finished
    assert [t["events"] for t in verified["uncovered"]] == [0]
    assert API_KEY.encode() not in db.read_bytes()
    for suffix in ("-wal", "-shm"):
        side = db.with_name(db.name + suffix)
        assert not side.exists() or API_KEY.encode() not in side.read_bytes()


def test_pre_execution_rewrites_the_task_before_navigating(tmp_path: Path, agent_llm: ScriptedLlm) -> None:
    db = tmp_path / "rec.db"
    result = record(db, agent_llm, "--task", "Lena_Fischer_A1", "--scheme", "pre-execution")
    assert result.exit_code == 0, result.output
    timeline = events(db, "Lena_Fischer_A1")
    queries = [e for e in timeline if e["type"] == "history.query"]
    assert queries and all(q["payload"]["phase"] == "pre-execution" and q["payload"]["step"] == 0 for q in queries)
    first_observation = next(i for i, e in enumerate(timeline) if e["type"] == "observation")
    last_query = max(i for i, e in enumerate(timeline) if e["type"] == "history.query")
    assert last_query < first_observation, "pre-execution asks everything before the first step"
    rewrite = [e for e in timeline if e["type"] == "rationale" and e["payload"]["text"].startswith("Rewritten task:")]
    assert rewrite and "basket.p2w.test" in rewrite[0]["payload"]["text"]
    assert not any(e["type"] == "action" and e["payload"]["parsed"]["name"] == "memory_access" for e in timeline)
    assert timeline[-1]["payload"]["end_reason"] == "answered"


def test_no_history_scheme_never_touches_the_history(tmp_path: Path, agent_llm: ScriptedLlm) -> None:
    db = tmp_path / "rec.db"
    result = record(db, agent_llm, "--task", "Lena_Fischer_A3", "--scheme", "no-history")
    assert result.exit_code == 0, result.output
    timeline = events(db, "Lena_Fischer_A3")
    assert not [e for e in timeline if e["type"].startswith("history.")]
    system_prompts = [r["messages"][0]["content"] for r in agent_llm.chat_requests]
    assert all("memory_access [query]: ask" not in p or "disabled" in p for p in system_prompts)
    assert timeline[-1]["payload"]["end_reason"] == "answered"
