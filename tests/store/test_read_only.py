"""Comparisons are read-only, and a database on read-only media opens read-only for every reading command.

Tests run as root, and root writes through ``chmod 444`` and a read-only folder, so those alone prove nothing
here. The real condition is a read-only mount: each command runs in its own mount namespace (``unshare -m``)
where the archive folder is bind-mounted read-only, which refuses writes to root as well (EROFS). Nothing is
mounted outside that process.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.replay.judges import judgment_stream
from p2w_runtime.store import open_store
from tests.helpers.read_only_mount import on_read_only, skip_unless_read_only_mounts

P2W_RT = str(Path(sys.executable).with_name("p2w-rt"))


def _with_read_only(folder: Path, command: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``command`` with ``folder`` on a read-only mount that only this process sees."""
    return subprocess.run(on_read_only(folder, command), capture_output=True, text=True, timeout=300, cwd=folder.parent)


@pytest.fixture(scope="module")
def read_only_mounts(tmp_path_factory: pytest.TempPathFactory) -> None:
    skip_unless_read_only_mounts(tmp_path_factory.mktemp("probe"))


def _import_examples(db: Path, fmt: str) -> str:
    result = CliRunner().invoke(main, ["--db", str(db), "import-trajectories", "--examples", "--format", fmt])
    assert result.exit_code == 0, result.output
    return f"examples-{fmt.removeprefix('p2w-')}"


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def _judgment_heads(db: Path) -> list[str]:
    async def heads() -> list[str]:
        async with open_store(db, create=False) as store:
            return [h.stream for h in await store.list_streams() if h.stream.endswith(judgment_stream(""))]

    return asyncio.run(heads())


def test_diff_stats_and_reading_commands_work_on_a_read_only_mount_and_write_nothing(
    tmp_path: Path, read_only_mounts: None
) -> None:
    work, archive = tmp_path / "work", tmp_path / "archive"
    work.mkdir()
    archive.mkdir()
    mine, old = work / "mine.db", archive / "old.db"
    a = _import_examples(mine, "p2w-agentoccam")
    b = _import_examples(old, "p2w-browser-use")
    _import_examples(old, "p2w-agentoccam")
    old.chmod(0o444)
    archive.chmod(0o555)
    before = _digest(archive)
    ref = f"{old}:{b}"

    diff = _with_read_only(archive, [P2W_RT, "--db", str(mine), "diff", a, ref, "--json"])
    assert diff.returncode == 0, diff.stderr
    assert set(json.loads(diff.stdout)["metrics"]) >= {"p_web", "success_rate"}
    stats = _with_read_only(archive, [P2W_RT, "--db", str(old), "stats", b, "examples-agentoccam", "--json"])
    assert stats.returncode == 0, stats.stderr
    assert [r["label"] for r in json.loads(stats.stdout)["runs"]] == [b, "examples-agentoccam"]
    for reading in (["runs"], ["show", b], ["verify"], ["metrics", b]):
        done = _with_read_only(archive, [P2W_RT, "--db", str(old), *reading])
        assert done.returncode == 0, (reading, done.stderr)

    assert _digest(archive) == before  # not a byte written, no -wal or -shm left behind
    assert _judgment_heads(mine) == []  # and the writable file named beside it got no judgments either


def test_a_writing_command_on_a_read_only_mount_says_so_in_one_line(tmp_path: Path, read_only_mounts: None) -> None:
    archive = tmp_path / "archive"
    archive.mkdir()
    label = _import_examples(archive / "old.db", "p2w-agentoccam")
    before = _digest(archive)
    done = _with_read_only(
        archive, [P2W_RT, "--db", str(archive / "old.db"), "replay", label, "--judge", "rubric-rules"]
    )
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1] == (
        f"error: {archive / 'old.db'}: opened read-only (the file, its folder or its medium is read-only)"
    )
    assert _digest(archive) == before


def test_diff_names_the_episodes_an_llm_judge_has_not_judged_instead_of_judging_them(tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    a = _import_examples(db, "p2w-agentoccam")
    b = _import_examples(db, "p2w-browser-use")
    result = CliRunner().invoke(main, ["--db", str(db), "diff", a, b, "--judge", "rubric-llm"])
    assert result.exit_code != 0
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"error: run {a!r} (") and "has no rubric-llm judgments for " in line
    assert "Jordan_Park_A1" in line and f"p2w-rt replay {a} --judge rubric-llm" in line
    assert _judgment_heads(db) == []
