"""``view --export DIR`` writes only beneath DIR: a symbolic link already inside it is refused by name, and a hard
link to a file elsewhere is replaced, not written through, in a folder written with ``--force`` (it holds no export)
as in an earlier export. Run as ``p2w-rt`` processes on a recorded example run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.p2w_process import p2w_rt


def files_in(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(("link", "target"), [("blobs", "."), ("index.html", "kept.html"), ("static", ".")])
def test_a_symbolic_link_inside_the_export_folder_is_refused_and_nothing_lands_outside(
    example_db: Path, tmp_path: Path, link: str, target: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kept.html").write_text("mine")
    site = tmp_path / "site"
    site.mkdir()
    (site / link).symlink_to(outside / target)
    done = p2w_rt(example_db, "view", "--export", str(site), "--force", "earlier")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"error: {site / link}: is a symbolic link inside the export folder; refusing to write through it "
        "(remove it, or export to a new folder)"
    ]
    assert files_in(outside) == {"kept.html": b"mine"}
    assert (site / link).is_symlink()


def test_a_hard_link_inside_the_export_folder_is_replaced_not_written_through(example_db: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.html"
    outside.write_text("mine")
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").hardlink_to(outside)
    done = p2w_rt(example_db, "view", "--export", str(site), "--force", "earlier")
    assert done.returncode == 0, done.stderr
    assert outside.read_text() == "mine" and "<html" in (site / "index.html").read_text()
    written = files_in(site)
    assert not [name for name in written if name.endswith(".partial")]
    assert {"index.html", "static/view.css", "static/view.js"} <= set(written)
    assert any(name.startswith("blobs/") for name in written) and any(name.startswith("episode-") for name in written)


def test_an_export_stopped_halfway_leaves_no_index_to_open(example_db: Path, tmp_path: Path) -> None:
    """``index.html`` is written last: an export that fails (here at its recorded pages, after every episode page)
    or is killed leaves no index that opens as if complete, its links dangling."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "dom").symlink_to(tmp_path)
    done = p2w_rt(example_db, "view", "--export", str(site), "--force", "earlier")
    assert done.returncode == 1 and "is a symbolic link inside the export folder" in done.stderr
    written = files_in(site)
    assert any(name.startswith("episode-") for name in written)
    assert "index.html" not in written


def test_a_symbolic_link_inside_an_earlier_export_stops_the_next_before_it_removes_anything(
    example_db: Path, tmp_path: Path
) -> None:
    """Replacing an earlier export removes its files through the same folders, never following a link: a link found
    there is refused by name before any file of the earlier export is removed."""
    site = tmp_path / "site"
    first = p2w_rt(example_db, "view", "--export", str(site), "earlier")
    assert first.returncode == 0, first.stderr
    outside = tmp_path / "outside"
    (site / "blobs").rename(outside)
    (site / "blobs").symlink_to(outside)
    before, outside_before = files_in(site), files_in(outside)
    done = p2w_rt(example_db, "view", "--export", str(site), "earlier")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"error: {site / 'blobs'}: is a symbolic link inside the export folder; refusing to write through it "
        "(remove it, or export to a new folder)"
    ]
    assert files_in(outside) == outside_before and files_in(site) == before
