"""`p2w-rt export RUN... --format parquet`: five tables read back with pyarrow agree with `metrics` and the log."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.schemas import LlmCall
from p2w_runtime.demo.examples import example_run_bundles
from p2w_runtime.domain import find_run
from p2w_runtime.store import open_store


def p2w(db: Path, *args: str) -> str:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


async def _recorded_calls(db: Path, label: str) -> list[LlmCall]:
    """The run's recorded model calls, read through the store."""
    async with open_store(db, create=False, read_only=True) as store:
        run = await find_run(store, label)
        events = [e async for e in store.read_all(stream_prefix=f"{run.run_id}/", types=["llm.call"])]
    return [LlmCall.model_validate(e.payload) for e in events]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """Two imported runs (no model calls: the runners log none), judged and classified, and the recorded example run
    ``earlier`` (its model calls with usage, as the recorder wrote them)."""
    path = tmp_path / "runs.db"
    for fmt, label in (("p2w-agentoccam", "ao"), ("p2w-browser-use", "bu")):
        p2w(path, "import-trajectories", "--format", fmt, "--examples", "--label", label)
        p2w(path, "replay", label, "--judge", "rubric-rules", "--judge", "outcome-based-rules")
        p2w(path, "classify", label)
    (earlier,) = [bundle for bundle in example_run_bundles() if bundle.stem == "earlier"]
    p2w(path, "import", str(earlier))
    return path


def test_the_tables_agree_with_metrics_and_the_log(db: Path, tmp_path: Path) -> None:
    path = db
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
        judge_id, _, version = m["judge"].partition("@")  # the judge column names the version it scores with
        same_judge = pc.and_(pc.equal(judgments["judge_id"], judge_id), pc.equal(judgments["judge_version"], version))
        rows = judgments.filter(pc.and_(pc.equal(judgments["label"], m["run"]), same_judge))
        assert rows.num_rows == m["judged"]
        for figure in ("p_web", "p_pref", "p_avg", "intent"):
            assert pc.mean(rows[figure]).as_py() == pytest.approx(m[figure], abs=1e-6)  # JSON figures have 6 places
        assert pc.mean(rows["success"]).as_py() == pytest.approx(m["success_rate"], abs=1e-6)
    assert episodes.num_rows == 6 == sum(m["episodes"] for m in main_rows if m["judge"].startswith("rubric-rules@"))
    assert judgments.num_rows == 12
    assert sorted(set(episodes["judges"].to_pylist()[0])) == ["outcome-based-rules", "rubric-rules"]
    assert all("rules" in labels for labels in (dict(x) for x in episodes["labels"].to_pylist()))

    assert steps.num_rows == pc.sum(episodes["actions"]).as_py()
    assert queries.num_rows == pc.sum(episodes["history_queries"]).as_py()
    assert pc.sum(queries["hit_count"]).as_py() == sum(len(h) for h in queries["hits"].to_pylist()) > 0
    assert calls.num_rows == 0 == pc.sum(episodes["llm_calls"]).as_py()
    first = judgments.to_pylist()[0]
    assert first["points"] and all(p["points"] <= p["max_points"] for p in first["points"])


def test_the_llm_calls_table_holds_every_recorded_call_with_its_usage(db: Path, tmp_path: Path) -> None:
    recorded = asyncio.run(_recorded_calls(db, "earlier"))
    out = tmp_path / "calls"
    p2w(db, "export", "earlier", "--format", "parquet", "-o", str(out))
    episodes = pq.read_table(out / "episodes.parquet")
    calls = pq.read_table(out / "llm_calls.parquet")
    assert calls.num_rows == len(recorded) == pc.sum(episodes["llm_calls"]).as_py() > 0
    assert pc.sum(calls["total_tokens"]).as_py() == sum(c.usage.total_tokens for c in recorded if c.usage)
    assert sorted(calls["role"].to_pylist()) == sorted(c.role for c in recorded)
    assert pc.all(calls["counted"]).as_py()


def test_unknown_runs_and_an_occupied_folder_are_refused_before_writing(db: Path, tmp_path: Path) -> None:
    path = db
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


def test_a_folder_that_cannot_take_the_tables_is_one_line_and_keeps_no_partial_table(db: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    under_a_file = CliRunner().invoke(
        main, ["--db", str(db), "export", "ao", "--format", "parquet", "-o", str(blocker / "tables")]
    )
    assert under_a_file.exit_code == 1 and under_a_file.output == (
        f"error: {blocker / 'tables'}: cannot write the tables (Not a directory)\n"
    )
    disk = tmp_path / "disk"  # a real full disk: a 32 KiB tmpfs that only the command sees; a table or two fit
    disk.mkdir()
    unshare = ["unshare", "-m", "--propagation", "private"] if os.geteuid() == 0 else ["unshare", "-rm"]
    p2w_rt = str(Path(sys.executable).with_name("p2w-rt"))
    export = f'"{p2w_rt}" --db "{db}" export ao bu earlier --format parquet -o "{disk}/tables"'
    script = f'mount -t tmpfs -o size=32k tmpfs "{disk}" && {{ {export}; echo "exit $?"; ls -A "{disk}"; }}'
    done = subprocess.run([*unshare, "sh", "-c", script], capture_output=True, text=True)
    if done.stderr.startswith(("unshare:", "mount:")):
        pytest.skip(f"cannot mount a private tmpfs here ({done.stderr.strip()[:200]})")
    assert done.stdout == "exit 1\n", "no table and no folder left on the full disk"
    assert (
        done.stderr.startswith(f"error: {disk / 'tables'}: cannot write the tables (")
        and "No space left" in done.stderr
    )
    assert len(done.stderr.splitlines()) == 1
