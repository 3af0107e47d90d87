"""stats: three repeated runs of the same tasks, mean and sample standard deviation per metric."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.store import open_store
from tests.helpers.classify_builders import add_run, good_episode, wrong_size


async def _build(main_db: Path, other_db: Path) -> None:
    async with open_store(main_db) as store:
        await add_run(
            store, "r1", [good_episode("r1", "T_A1"), good_episode("r1", "T_B1"), wrong_size("r1", "T_C1")], run_id="r1"
        )
        await add_run(
            store, "r2", [good_episode("r2", "T_A1"), wrong_size("r2", "T_B1"), wrong_size("r2", "T_C1")], run_id="r2"
        )
    async with open_store(other_db) as store:
        episodes = [good_episode("r3", t) for t in ("T_A1", "T_B1", "T_C1", "T_D1")]
        await add_run(store, "r3", episodes, run_id="r3")


@pytest.fixture
def dbs(tmp_path: Path) -> tuple[Path, Path]:
    main_db, other_db = tmp_path / "main.db", tmp_path / "other.db"
    asyncio.run(_build(main_db, other_db))
    return main_db, other_db


def test_three_runs_mean_and_std(dbs: tuple[Path, Path]) -> None:
    main_db, other_db = dbs
    result = CliRunner().invoke(
        main, ["--db", str(main_db), "stats", "r1", "r2", f"{other_db}:r3", "--json"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["judge"] == "rubric-rules" and out["tasks"] == 3
    runs = {r["label"]: r for r in out["runs"]}
    assert [runs[k]["metrics"]["success_rate"] for k in ("r1", "r2", "r3")] == pytest.approx([2 / 3, 1 / 3, 1.0])
    assert runs["r3"]["excluded"] == ["T_D1"] and runs["r1"]["excluded"] == []
    assert out["mean"]["success_rate"] == pytest.approx(2 / 3, abs=1e-6)
    assert out["std"]["success_rate"] == pytest.approx(1 / 3, abs=1e-6)
    prefs = [(1 + 1 + 0.75) / 3, (1 + 0.75 + 0.75) / 3, 1.0]
    mean = sum(prefs) / 3
    assert out["mean"]["p_pref"] == pytest.approx(mean, abs=1e-6)
    assert out["std"]["p_pref"] == pytest.approx(math.sqrt(sum((p - mean) ** 2 for p in prefs) / 2), abs=1e-6)
    assert out["mean"]["p_web"] == 1.0 and out["std"]["p_web"] == 0.0


def test_the_table_has_a_row_per_run_and_mean_std(dbs: tuple[Path, Path]) -> None:
    main_db, other_db = dbs
    result = CliRunner().invoke(
        main, ["--db", str(main_db), "stats", "r1", "r2", f"{other_db}:r3"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    (mean,) = [line for line in lines if line.startswith("│ mean")]
    (std,) = [line for line in lines if line.startswith("│ ± std")]
    assert mean.split("│")[-2].strip() == "0.667" and std.split("│")[-2].strip() == "0.333"
    assert "left out (not scored in every run): T_D1" in result.stdout


def test_stats_needs_two_runs(dbs: tuple[Path, Path]) -> None:
    main_db, _ = dbs
    result = CliRunner().invoke(main, ["--db", str(main_db), "stats", "r1"])
    assert result.exit_code == 2 and "at least two runs" in result.output
