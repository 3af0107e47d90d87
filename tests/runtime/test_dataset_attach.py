"""Runs recorded before runs carried their dataset: commands that need it say so in one line, and
`attach-dataset` gives it to them, checked, as one appended event (on the fixture database of the earlier schema).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from p2w_rt.cli import main
from p2w_runtime.demo.examples import example_paths
from p2w_runtime.demo.sample import sample_history_dir, sample_tasks_dir
from tests.helpers.paths import DATA
from tests.helpers.raw_sqlite import raw_sqlite

FIXTURE = DATA / "fixture_dbs" / "v1.db"
EXAMPLES = example_paths()


@pytest.fixture
def v1(tmp_path: Path) -> Path:
    copy = tmp_path / "v1.db"
    shutil.copyfile(FIXTURE, copy)
    return copy


def invoke(db: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)


def attach(db: Path, tasks: Path, history: Path) -> Result:
    return invoke(db, "attach-dataset", "agentoccam", "--tasks", str(tasks), "--history", str(history))


def events(db: Path) -> list[tuple[str, int, str]]:
    with raw_sqlite(db) as conn:
        return conn.execute("SELECT stream, seq, hash FROM events ORDER BY stream, seq").fetchall()


def test_an_old_run_says_what_it_lacks_and_how_to_attach_it(v1: Path) -> None:
    result = invoke(v1, "replay", "agentoccam", "--retriever", "default")
    assert result.exit_code != 0
    assert result.stderr.strip() == (
        "error: run 'agentoccam' carries no memory banks (recorded before runs carried their dataset): attach them "
        "with `p2w-rt attach-dataset agentoccam --tasks DIR --history DIR`, or pass --history DIR"
    )


def test_other_folders_are_refused_and_nothing_is_appended(v1: Path, tmp_path: Path) -> None:
    before = events(v1)
    wrong_tasks = attach(v1, sample_tasks_dir(), EXAMPLES.history_dir)
    assert wrong_tasks.exit_code != 0 and "these task files are dataset persona2web@" in wrong_tasks.stderr
    missing_bank = attach(v1, EXAMPLES.tasks_dir, sample_history_dir())
    assert missing_bank.exit_code != 0 and "Jordan_Park.json: missing" in missing_bank.stderr
    edited = shutil.copytree(EXAMPLES.history_dir, tmp_path / "edited")
    bank = json.loads((edited / "Jordan_Park.json").read_text())
    entries = bank if isinstance(bank, list) else next(v for v in bank.values() if isinstance(v, list))
    entries.pop()
    (edited / "Jordan_Park.json").write_text(json.dumps(bank))
    changed = attach(v1, EXAMPLES.tasks_dir, edited)
    assert changed.exit_code != 0 and "not the memory bank run 'agentoccam' searched" in changed.stderr
    assert len(changed.stderr.strip().splitlines()) == 1
    assert events(v1) == before


def test_attaching_appends_one_sealed_event_and_the_run_then_replays(v1: Path) -> None:
    before = events(v1)
    done = attach(v1, EXAMPLES.tasks_dir, EXAMPLES.history_dir)
    assert done.exit_code == 0, done.output
    assert "3 memory banks (3 matched the index hash of a recorded search)" in done.stdout
    after = events(v1)
    assert set(before) <= set(after), "nothing recorded is rewritten"
    assert len(after) == len(before) + 1
    again = attach(v1, EXAMPLES.tasks_dir, EXAMPLES.history_dir)
    assert again.exit_code == 0 and "already carries its dataset" in again.stdout
    assert len(events(v1)) == len(after)
    verified = json.loads(invoke(v1, "verify", "agentoccam", "--json").stdout)
    assert verified["ok"] and verified["uncovered"][0]["events"] == 0, "the attached event is itself a seal"
    replay = invoke(v1, "replay", "agentoccam", "--retriever", "default", "--json")
    assert replay.exit_code == 0, replay.output
    other = invoke(v1, "replay", "browser-use", "--retriever", "default")
    assert other.exit_code != 0 and "attach-dataset browser-use" in other.stderr, "attached to one run only"
