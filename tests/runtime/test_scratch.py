"""Scratch folders and files are named for their maker, and whoever makes the next one removes those a killed
process left (``p2w_runtime.scratch``); a live maker's, another PID namespace's and anything not named so stay."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from p2w_runtime.scratch import new_scratch_file, new_scratch_folder, scratch_folder, sweep


def _gone_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def _namespace() -> int:
    return os.stat("/proc/self/ns/pid").st_ino


def test_sweep_removes_what_a_gone_maker_left_and_nothing_else(tmp_path: Path) -> None:
    ns, dead, alive = _namespace(), _gone_pid(), os.getpid()
    left = tmp_path / f"p2w-rerun-{ns}.{dead}.abc123"
    (left / "sub").mkdir(parents=True)
    (left / "sub" / "rerun.db").write_bytes(b"x" * 1000)
    (tmp_path / f"p2w-bundle-{ns}.{dead}.q1w2e3.p2w").write_bytes(b"copy")
    kept = [
        f"p2w-rerun-{ns}.{alive}.abc123",  # its maker runs
        f"p2w-rerun-{ns + 1}.{dead}.abc123",  # another namespace's process: not judged here
        f"p2w-rerun-{dead}-abc123",  # not a scratch name
        f"other-{ns}.{dead}.abc123",
    ]
    for name in kept:
        (tmp_path / name).mkdir()
    assert sorted(sweep(tmp_path)) == sorted([left.name, f"p2w-bundle-{ns}.{dead}.q1w2e3.p2w"])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(kept)


def test_a_scratch_folder_is_named_for_this_process_removed_after_and_sweeps_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)  # read TMPDIR again
    orphan = tmp_path / f"p2w-har-{_namespace()}.{_gone_pid()}.zzz"
    orphan.mkdir()
    with scratch_folder("rerun") as folder:
        assert folder.parent == tmp_path and folder.name.startswith(f"p2w-rerun-{_namespace()}.{os.getpid()}.")
        assert not orphan.exists()
        (folder / "f").write_text("x")
    assert not folder.exists()
    made = new_scratch_folder("har")
    fd, file = new_scratch_file("bundle", ".p2w")
    os.close(fd)
    assert (made.stat().st_mode & 0o777, file.stat().st_mode & 0o777) == (0o700, 0o600)
    assert sweep(tmp_path) == []  # this process runs: its own stay
    assert file.name.startswith(f"p2w-bundle-{_namespace()}.{os.getpid()}.") and file.name.endswith(".p2w")
