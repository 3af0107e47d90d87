"""What `metrics`, `stats` and `diff` write beside their figures: the plot in the format its file's suffix names,
and counts in words ("1 task", never "1 tasks")."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.replay.derived import family
from p2w_runtime.store import open_store
from tests.helpers.builders import build
from tests.helpers.classify_builders import add_run, good_episode, wrong_size

RULES = f"rubric-rules@{family('judge').get('rubric-rules').version}"
"""The judge the tables name, at its installed version."""


def invoke(db: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def judged(tmp_path: Path) -> Path:
    db = tmp_path / "plot.db"
    build(db, label="a")
    assert invoke(db, "replay", "a", "--judge", "rubric-rules")[0] == 0
    return db


@pytest.mark.parametrize(
    ("name", "head"), [("levels.svg", b"<?xml"), ("levels.pdf", b"%PDF-"), ("levels.PNG", b"\x89PNG\r\n\x1a\n")]
)
def test_the_plot_is_written_in_the_format_its_suffix_names(judged: Path, name: str, head: bytes) -> None:
    plot = judged.parent / name
    code, _, err = invoke(judged, "metrics", "a", "--plot", str(plot))
    assert code == 0, err
    assert plot.read_bytes().startswith(head)
    if name.endswith(".svg"):
        assert b"<svg" in plot.read_bytes()[:1000]


@pytest.mark.parametrize("name", ["levels.txt", "levels.jpg", "levels"])
def test_a_suffix_the_plot_cannot_have_is_refused_before_any_work(judged: Path, name: str) -> None:
    plot = judged.parent / name
    code, out, err = invoke(judged, "metrics", "a", "--plot", str(plot))
    assert code == 1 and out == "" and not plot.exists()
    (line,) = err.splitlines()
    assert line.startswith(f"error: --plot {plot}: ") and line.endswith("name the file .png, .svg or .pdf")


async def _one_task_runs(db: Path) -> None:
    async with open_store(db) as store:
        await add_run(store, "r1", [good_episode("r1", "T_A1")], run_id="r1")
        await add_run(store, "r2", [wrong_size("r2", "T_A1"), good_episode("r2", "T_B1")], run_id="r2")


def test_counts_are_in_words(tmp_path: Path) -> None:
    db = tmp_path / "one.db"
    asyncio.run(_one_task_runs(db))
    code, out, err = invoke(db, "stats", "r1", "r2")
    assert code == 0, err
    assert f"2 runs, 1 task scored in every run (judge {RULES})" in out
    code, out, err = invoke(db, "diff", "r1", "r2")
    assert code == 0, err
    assert f"(judge {RULES}, 1 paired task)" in out
    assert "trajectories: 0 of 1 task in both runs take the same actions" in out
    code, out, err = invoke(db, "diff", "r1", "r1")
    assert "trajectories: 1 of 1 task in both runs takes the same actions" in out
