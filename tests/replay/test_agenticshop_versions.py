"""AgenticShop's `metrics` tables score each judge at one version, as Table 5 does (``replay.metrics._versions``):
users judged only by an older release of a judge are left out and counted, a judgment appended later by an older
release changes nothing, and every table names the version it scores with."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.schemas import uuid7
from p2w_runtime.store import open_store
from p2w_runtime.testing.episodes import EpisodeBuilder, run_finished, run_started
from tests.helpers.judge_versions import judged_at

CHECKLIST = "agenticshop-checklist"
FIGURES = ("score", "dim.brand_preferences")


async def _build(db: Path) -> None:
    async with open_store(db) as store:
        run_id = uuid7()
        events = [run_started(run_id, "shop")]
        for task_id in ("demo-A1", "demo-B1"):
            b = EpisodeBuilder(run_id, task_id, query="Find trail running shoes")
            b.observation(1, "https://shop.example/")
            b.action(1, "stop", "https://shop.example/p/1")
            b.finish("answered", "https://shop.example/p/1", steps=1)
            events += b.events
        await store.append([*events, run_finished(run_id, 2)])
        for task_id, version, value in (("demo-A1", "3", 0.0), ("demo-B1", "3", 0.0), ("demo-A1", "4", 1.0)):
            await judged_at(store, run_id, task_id, version, value, CHECKLIST, FIGURES)
        await judged_at(store, run_id, "demo-A1", "3", 0.0, CHECKLIST, FIGURES)  # an older release, run again


def test_each_judge_scores_at_one_version_named_in_every_table(tmp_path: Path) -> None:
    db = tmp_path / "shop.db"
    asyncio.run(_build(db))
    result = CliRunner().invoke(main, ["--db", str(db), "metrics", "shop", "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    overall = next(r for r in rows if r["table"] == "by_variant" and r["variant"] == "all")
    assert (overall["users"], overall["score"]) == (1, 1.0)  # demo-A1 at version 4; demo-B1 has no version 4
    dims = {r["dimension"]: r["satisfied"] for r in rows if r["table"] == "per_dimension"}
    assert dims == {"brand_preferences": 1.0}

    result = CliRunner().invoke(main, ["--db", str(db), "metrics", "shop", "--format", "md"])
    assert result.exit_code == 0, result.output
    titles = [line for line in result.stdout.splitlines() if line.startswith("AgenticShop")]
    assert len(titles) == 2 and all(
        t.endswith(f"[scored with {CHECKLIST}@4; 1 user(s) judged by {CHECKLIST} only at another version left out]")
        for t in titles
    ), titles
