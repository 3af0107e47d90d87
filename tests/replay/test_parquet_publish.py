"""A Parquet export is published whole: a reader finds the earlier tables or the new ones, never a mix of two
exports, whether the export is killed at any point or a second one runs at the same time."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from tests.helpers.signal_at import signal_at

TABLES = ("episodes", "steps", "history_queries", "llm_calls", "judgments")


def p2w(db: Path, *args: str) -> str:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def tables(folder: Path) -> dict[str, str]:
    """The sha256 of each of the five tables found in ``folder``, by file name."""
    found = [folder / f"{t}.parquet" for t in TABLES]
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in found if path.exists()}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """Two imported runs, judged, so that every table but ``llm_calls`` differs between them."""
    path = tmp_path / "store" / "runs.db"
    path.parent.mkdir()
    for fmt, label in (("p2w-agentoccam", "ao"), ("p2w-browser-use", "bu")):
        p2w(path, "import-trajectories", "--format", fmt, "--examples", "--label", label)
        p2w(path, "replay", label, "--judge", "rubric-rules")
    return path


def test_an_export_killed_at_any_point_leaves_the_earlier_tables_or_the_new_ones(db: Path, tmp_path: Path) -> None:
    earlier, new = tmp_path / "earlier", tmp_path / "new"
    p2w(db, "export", "ao", "--format", "parquet", "-o", str(earlier))
    p2w(db, "export", "bu", "--format", "parquet", "-o", str(new))
    assert tables(earlier) != tables(new) == tables(new)
    work = tmp_path / "work"
    work.mkdir()
    out = work / "tables"
    export = ["--db", str(db), "export", "bu", "--format", "parquet", "-o", str(out), "--force"]
    for nth in itertools.count(1):  # killed at its 1st operation on the folder, its 2nd, ... until it finishes
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(earlier, out)
        done = subprocess.run(signal_at(work, nth, "SIGKILL", export), capture_output=True, text=True, timeout=300)
        assert done.returncode in (0, -signal.SIGKILL), done.stderr
        assert tables(out) in (tables(earlier), tables(new)), f"killed at operation {nth}: tables of two exports"
        if done.returncode == 0:
            break
    assert nth > 5, "killed before it made its folder, put it in place and removed the earlier one"
    assert tables(out) == tables(new)
    assert os.listdir(work) == ["tables"], "what the killed exports left beside the folder is gone"
    manifest = json.loads((out / "p2w-rt-export.json").read_text())
    assert [r["label"] for r in manifest["runs"]] == ["bu"]
    assert {name: entry["sha256"] for name, entry in manifest["tables"].items()} == tables(out)


def _stopped(proc: subprocess.Popen[str]) -> bool:
    """Whether ``proc`` has stopped itself (state ``T`` in ``/proc``), waiting up to a minute."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if Path(f"/proc/{proc.pid}/stat").read_text().rpartition(")")[2].split()[0] == "T":
            return True
        time.sleep(0.05)
    return False


def test_a_second_export_into_a_folder_being_written_is_refused_in_one_line(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "tables"
    export = ["--db", str(db), "export", "ao", "--format", "parquet", "-o", str(out)]
    nth = 2  # the first export stops before it puts its first table in place
    first = subprocess.Popen(signal_at(tmp_path, nth, "SIGSTOP", export), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert _stopped(first), first.communicate()
        second = CliRunner().invoke(main, ["--db", str(db), "export", "bu", "--format", "parquet", "-o", str(out)])
    finally:
        os.kill(first.pid, signal.SIGCONT)
    assert second.exit_code == 1
    assert second.output.splitlines() == [
        f"error: {out}: another p2w-rt export is writing these tables; let it finish, or export to another folder"
    ]
    _, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    manifest = json.loads((out / "p2w-rt-export.json").read_text())
    assert [r["label"] for r in manifest["runs"]] == ["ao"]
    assert {name: entry["sha256"] for name, entry in manifest["tables"].items()} == tables(out)
    assert sorted(os.listdir(tmp_path)) == ["store", "tables"]


def test_a_folder_holding_other_files_is_refused_and_kept(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "analysis"
    out.mkdir()
    (out / "notes.md").write_text("mine")
    said = CliRunner().invoke(main, ["--db", str(db), "export", "ao", "--format", "parquet", "-o", str(out), "--force"])
    assert said.exit_code == 1 and said.output.startswith(f"error: {out}: holds notes.md, which no Parquet export")
    assert os.listdir(out) == ["notes.md"]
