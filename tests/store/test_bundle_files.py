"""Bundles as files on disk: an export never writes over a file without ``--force`` nor replaces what is not a regular
file, a missing or unwritable folder is one line, two processes exporting to one path leave one whole bundle, and
an import shows its progress on a terminal only.

Every case goes through the ``p2w-rt`` command on a real database, the concurrent and the terminal ones in processes
of their own.
"""

from __future__ import annotations

import os
import pty
import subprocess
from pathlib import Path

import pytest

from tests.helpers.bundle_support import P2W_RT, read_lines
from tests.helpers.cli_in_process import invoke
from tests.helpers.paths import REPO


def test_export_over_an_existing_file_needs_force(december_db: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "december.p2w"
    bundle.write_bytes(b"a bundle from last year")
    refused = invoke(december_db, "export", "december", "-o", str(bundle))
    assert refused.exit_code == 1 and f"{bundle}: already exists (--force replaces it)" in refused.output
    assert bundle.read_bytes() == b"a bundle from last year"
    assert invoke(december_db, "export", "december", "-o", str(bundle), "--force").exit_code == 0
    assert read_lines(bundle)[0]["label"] == "december"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")] == []


def test_export_into_a_missing_or_unwritable_folder_is_one_line(december_db: Path, tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "b.p2w"
    result = invoke(december_db, "export", "december", "-o", str(missing))
    assert result.exit_code == 1 and f"folder {missing.parent} does not exist" in result.output
    # a folder no one may write to: /proc refuses even root
    result = invoke(december_db, "export", "december", "-o", "/proc/december.p2w")
    assert result.exit_code == 1 and "/proc/december.p2w: cannot write the bundle" in result.output
    assert len(result.output.splitlines()) == 1


def test_two_processes_exporting_to_one_path_at_once_leave_one_whole_bundle(december_db: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "december.p2w"
    command = [P2W_RT, "--db", str(december_db), "export", "december", "-o", str(bundle)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    both = [subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO) for _ in range(2)]
    results = sorted((p.wait(timeout=120), p.stderr.read()) for p in both)
    assert results[0] == (0, "")
    assert results[1][0] == 1 and f"{bundle}: already exists (--force replaces it)" in results[1][1]
    assert invoke(tmp_path / "target.db", "import", str(bundle)).exit_code == 0
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")] == []


def test_progress_goes_to_a_terminal_only(december_db: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "december.p2w"
    piped = invoke(december_db, "export", "december", "-o", str(bundle))
    assert piped.exit_code == 0 and piped.stderr == ""
    main_fd, terminal = pty.openpty()
    try:
        done = subprocess.run(
            [P2W_RT, "--db", str(tmp_path / "t.db"), "import", str(bundle)],
            stdout=subprocess.PIPE,
            stderr=terminal,
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO), "TERM": "xterm"},
            timeout=120,
        )
        os.close(terminal)
        shown = b""
        while True:
            try:
                data = os.read(main_fd, 65536)
            except OSError:
                break
            if not data:
                break
            shown += data
    finally:
        os.close(main_fd)
    assert done.returncode == 0 and b"imported december" in done.stdout
    assert b"importing" in shown and b"imported" not in shown


@pytest.mark.parametrize("force", [False, True], ids=["plain", "force"])
def test_export_never_replaces_what_is_not_a_regular_file(december_db: Path, tmp_path: Path, force: bool) -> None:
    """Moving the bundle into place replaces the directory entry: --force once made a symlink, or (as root)
    ``/dev/full``, a regular file."""
    target = tmp_path / "kept.txt"
    target.write_text("what the link points at")
    link, dangling, fifo, folder = (tmp_path / n for n in ("link.p2w", "dangling.p2w", "fifo.p2w", "folder.p2w"))
    link.symlink_to(target)
    dangling.symlink_to(tmp_path / "nowhere")
    os.mkfifo(fifo)
    folder.mkdir()
    kinds = {link: "a symbolic link", dangling: "a symbolic link", fifo: "a named pipe", folder: "a directory"}
    for path, kind in kinds.items():
        result = invoke(december_db, "export", "december", "-o", str(path), *(["--force"] if force else []))
        assert result.exit_code == 1 and f"{path}: is {kind}, not a regular file" in result.output, result.output
        assert len(result.output.splitlines()) == 1
    assert link.is_symlink() and dangling.is_symlink() and target.read_text() == "what the link points at"
    assert fifo.is_fifo() and folder.is_dir() and not (tmp_path / "nowhere").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")] == []
