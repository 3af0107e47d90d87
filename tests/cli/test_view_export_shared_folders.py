"""``view --export DIR --force`` never writes into the filesystem root or the home folder itself, where the export's
names (``index.html``, ``static/``, ``blobs/``) sit beside everyone's files: refused in one line, nothing written,
however the folder is spelled (``..``, a link). Run as ``p2w-rt`` processes on the demo's run ``earlier``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.read_only_root import on_read_only_root, skip_unless_read_only_root

pytestmark = pytest.mark.slow


def export(db: Path, folder: str | Path) -> list[str]:
    return [
        str(Path(sys.executable).with_name("p2w-rt")),
        "--db",
        str(db),
        "view",
        "--force",
        "--export",
        str(folder),
        "earlier",
    ]


def refusal(folder: str | Path, what: str) -> str:
    return (
        f"error: {folder}: is {what}; export into a folder of its own (even with --force: files of the export's "
        "names would be replaced there)"
    )


@pytest.mark.parametrize("spelled", ["home", "home/sub/..", "link"])
def test_the_home_folder_is_refused_even_with_force(demo: Path, tmp_path: Path, spelled: str) -> None:
    home = tmp_path / "home"
    (home / "sub").mkdir(parents=True)
    (home / "notes.txt").write_text("mine")
    (tmp_path / "link").symlink_to(home)
    folder = tmp_path / spelled
    done = subprocess.run(
        export(demo, folder), capture_output=True, text=True, timeout=300, env=os.environ | {"HOME": str(home)}
    )
    assert done.returncode == 1
    assert done.stderr.splitlines() == [refusal(folder, "your home folder")]
    assert sorted(p.name for p in home.iterdir()) == ["notes.txt", "sub"] and not any((home / "sub").iterdir())


def test_the_filesystem_root_is_refused_even_with_force(demo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Run with ``/`` read-only (the test's folders apart), so that a regression cannot write there."""
    writable = tmp_path_factory.getbasetemp()  # the demo's database, the log and the retrieval cache are beneath it
    skip_unless_read_only_root(writable)
    link = tmp_path_factory.mktemp("links") / "top"
    link.symlink_to("/")
    up = "/".join([str(writable), *[".."] * (len(writable.parts) - 1)])
    for folder in ("/", str(link), up):
        done = subprocess.run(
            on_read_only_root(writable, export(demo, folder)), capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 1
        assert done.stderr.splitlines() == [refusal(folder, "the filesystem root")]


def test_a_folder_whose_links_cannot_be_followed_is_refused_in_one_line(demo: Path, tmp_path: Path) -> None:
    """Telling the folder from the root and the home folder resolves its links: a loop ends in the line saying it
    cannot be written, not a traceback."""
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    folder = tmp_path / "a" / "site"
    done = subprocess.run(export(demo, folder), capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"error: cannot write the export to {folder}: Too many levels of symbolic links"
    ]
