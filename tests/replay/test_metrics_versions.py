"""Two versions of one judge are never averaged as one: `metrics`, `stats` and `diff` score every run with one
version, name it, and say which episodes it left out and how to judge them again."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.replay.derived import family
from p2w_runtime.domain import find_run
from p2w_runtime.store import open_store
from tests.helpers.builders import build
from tests.helpers.judge_versions import judged_at

VERSION = family("judge").get("rubric-rules").version
"""The installed rubric-rules' version: the newest, judging the episodes ``replay`` judges."""
RULES = f"rubric-rules@{VERSION}"
TASKS = ("Alex_Garcia_A3", "Alex_Garcia_A1", "Alex_Garcia_B1")
"""``build``'s episodes; rubric-rules scores them success 1, 1, 0 (B1 ran out of steps)."""


def invoke(db: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


async def _older_judgments(db: Path) -> None:
    async with open_store(db) as store:
        a, b = [(await find_run(store, label)).run_id for label in ("a", "b")]
        await judged_at(store, a, "Alex_Garcia_A3", "4", 0.0)  # after the current one: the latest of the episode
        for task in TASKS:
            await judged_at(store, b, task, "4", 0.0)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """Runs a and b of the same three tasks: a judged by the installed rubric-rules, and one of its episodes again by
    version 4 later; b judged by version 4 only."""
    path = tmp_path / "versions.db"
    build(path, label="a")
    build(path, label="b")
    assert invoke(path, "replay", "a", "--judge", "rubric-rules")[0] == 0
    asyncio.run(_older_judgments(path))
    return path


def _main_rows(out: str) -> list[dict]:
    return [row for line in out.splitlines() if (row := json.loads(line))["table"] == "main"]


def test_metrics_scores_with_one_version_and_says_what_it_left_out(db: Path) -> None:
    code, out, err = invoke(db, "metrics", "a", "b", "--format", "json")
    assert code == 0, err
    (row,) = _main_rows(out)
    assert (row["judge"], row["judged"], row["episodes"]) == (RULES, 3, 6)
    assert row["success_rate"] == 0.666667, "a's three judgments by the installed version only"
    assert err.splitlines() == [
        f"b: 3 episodes judged by rubric-rules only at version 4, not {VERSION}: they are left out of its figures; "
        "judge again: p2w-rt replay b --judge rubric-rules"
    ]
    code, out, _ = invoke(db, "metrics", "a", "b", "--format", "md")
    assert code == 0 and f"| agentoccam | gpt-4.1 | on-demand | {RULES} | " in out

    assert invoke(db, "replay", "b", "--judge", "rubric-rules")[0] == 0  # the line's command brings b up to date
    code, out, err = invoke(db, "metrics", "a", "b", "--format", "json")
    (row,) = _main_rows(out)
    assert (row["judged"], row["episodes"], row["success_rate"]) == (6, 6, 0.666667) and err == ""


def test_stats_and_diff_score_both_runs_with_one_version(db: Path) -> None:
    code, out, err = invoke(db, "stats", "a", "b", "--json")
    assert code == 0, err
    stats = json.loads(out)
    assert (stats["judge"], stats["judge_version"]) == ("rubric-rules", VERSION)
    assert [r["metrics"]["success_rate"] for r in stats["runs"]] == [0.666667, 0.666667]
    code, out, err = invoke(db, "diff", "a", "b", "--json")
    assert code == 0, err
    diff = json.loads(out)
    assert diff["judge_version"] == VERSION and diff["metrics"]["success_rate"]["delta"] == 0.0
    code, out, _ = invoke(db, "stats", "a", "b")
    assert code == 0 and f"(judge {RULES})" in out


def test_runs_judged_whole_by_one_older_version_are_compared_at_that_version(tmp_path: Path) -> None:
    """Recorded judgments that cover every episode at one version are used as they are (no judge runs), and the
    table says which version they are."""
    path = tmp_path / "older.db"
    build(path, label="a")
    build(path, label="b")

    async def older() -> None:
        async with open_store(path) as store:
            for label, value in (("a", 1.0), ("b", 0.0)):
                run_id = (await find_run(store, label)).run_id
                for task in TASKS:
                    await judged_at(store, run_id, task, "4", value)

    asyncio.run(older())
    code, out, err = invoke(path, "diff", "a", "b")
    assert code == 0, err
    assert "(judge rubric-rules@4, 3 paired tasks)" in out
    code, out, _ = invoke(path, "stats", "a", "b", "--json")
    assert [r["metrics"]["success_rate"] for r in json.loads(out)["runs"]] == [1.0, 0.0]


@pytest.mark.parametrize(
    ("older", "newer"),
    [("9", "10"), ("1.9", "1.10"), ("2a", "10"), ("2-beta", "2"), ("", "9"), ("2", "²"), ("9", "1" + "0" * 4400)],
)
def test_metrics_scores_with_the_newest_version_in_natural_order(tmp_path: Path, older: str, newer: str) -> None:
    """Whatever a release called its versions: numbers by their value (however many digits), a pre-release before
    its release, an empty version before any."""
    path = tmp_path / "named.db"
    build(path, label="a")

    async def judged() -> None:
        async with open_store(path) as store:
            run_id = (await find_run(store, "a")).run_id
            for version in (newer, older):
                for task in TASKS:
                    await judged_at(store, run_id, task, version, 1.0 if version == newer else 0.0)

    asyncio.run(judged())
    code, out, err = invoke(path, "metrics", "a", "--format", "json")
    assert code == 0, err
    (row,) = _main_rows(out)
    assert (row["judge"], row["success_rate"]) == (f"rubric-rules@{newer}", 1.0)


def test_versions_alike_but_for_their_text_give_one_newest_on_every_machine(tmp_path: Path) -> None:
    """A set of versions iterates in a per-process order (the hash seed): the newest of "1" and "01", which read as
    one number, must not follow it. ``p2w-rt metrics`` under several seeds names one."""
    path = tmp_path / "alike.db"
    build(path, label="a")

    async def judged() -> None:
        async with open_store(path) as store:
            run_id = (await find_run(store, "a")).run_id
            for version in ("01", "1"):
                for task in TASKS:
                    await judged_at(store, run_id, task, version, 1.0)

    asyncio.run(judged())
    named = set()
    for seed in range(8):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        done = subprocess.run(
            [str(Path(sys.executable).with_name("p2w-rt")), "--db", str(path), "metrics", "a", "--format", "json"],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        named |= {row["judge"] for row in _main_rows(done.stdout)}
    assert named == {"rubric-rules@1"}
