"""The bar of a judging or classifying pass counts what the pass made, as its closing line does, beside what it
reused and what failed: made is what a pass pays for, and done minus cached is no count a person should subtract."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from tests.helpers.paths import DATA

RUN = "agentoccam"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    copy = tmp_path / "v1.db"
    shutil.copy(DATA / "fixture_dbs" / "v1.db", copy)
    return copy


def bar(db: Path, *args: str) -> str:
    result = CliRunner().invoke(main, ["--db", str(db), *args])
    assert result.exit_code == 0, result.output
    [line] = [line for line in result.stdout.splitlines() if re.match(rf"(judging|classifying) {RUN} ", line)]
    return " ".join(line.split())


@pytest.mark.parametrize(("command", "made"), [("replay", "judged"), ("classify", "classified")])
def test_the_bar_counts_what_the_pass_made_then_what_it_reused(db: Path, command: str, made: str) -> None:
    producer = ("--judge", "rubric-rules") if command == "replay" else ("--classifier", "rules")
    assert f"3/3 {made} 3 · cached 0 · failed 0" in bar(db, command, RUN, *producer)
    assert f"3/3 {made} 0 · cached 3 · failed 0" in bar(db, command, RUN, *producer)
