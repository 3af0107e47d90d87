"""What ``view --export DIR`` does with what DIR already holds: an empty or missing folder is written, an earlier
export is replaced whole (nothing of it left, nothing it did not write removed), any other folder is refused unless
``--force``; an export killed halfway leaves no index and the next one completes the folder; two exports into one
folder take turns. Run as ``p2w-rt`` processes on the demo's runs ``earlier`` and ``later``."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.no_flock import refusing_flock, skip_unless_flock_can_be_refused
from tests.helpers.p2w_process import p2w_rt
from tests.helpers.view_support import dangling_links

pytestmark = pytest.mark.slow

JOURNAL = ".p2w-rt-export"


def files_in(folder: Path) -> dict[str, bytes]:
    """Every file beneath ``folder`` but the journal, by relative name."""
    found = {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
    found.pop(JOURNAL, None)
    return found


def journal(folder: Path) -> list[str]:
    """The files the journal lists, in the order written."""
    return [json.loads(line)["file"] for line in (folder / JOURNAL).read_text().splitlines()[1:]]


def start_export(db: Path, folder: Path, *runs: str) -> subprocess.Popen[str]:
    command = [str(Path(sys.executable).with_name("p2w-rt")), "--db", str(db), "view", "--export", str(folder), *runs]
    return subprocess.Popen(command, cwd=db.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for(what: str, proc: subprocess.Popen[str], done: Callable[[], bool]) -> None:
    """Poll until ``done``, while ``proc`` still runs; a generous deadline for a loaded machine."""
    deadline = time.monotonic() + 240
    while not done():
        assert proc.poll() is None, f"the export ended before {what}: {proc.communicate()}"
        assert time.monotonic() < deadline, f"no {what} within 240 s"
        time.sleep(0.01)


@pytest.fixture(scope="module")
def fresh(demo: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The files of ``earlier`` exported into a missing folder: what any folder holds once ``earlier`` is exported
    into it."""
    out = tmp_path_factory.mktemp("fresh") / "site"
    done = p2w_rt(demo, "view", "--export", str(out), "earlier")
    assert done.returncode == 0, done.stderr
    assert "replacing" not in done.stdout
    return files_in(out)


def test_an_empty_folder_is_written_without_force(demo: Path, tmp_path: Path, fresh: dict[str, bytes]) -> None:
    site = tmp_path / "site"
    site.mkdir()
    done = p2w_rt(demo, "view", "--export", str(site), "earlier")
    assert done.returncode == 0, done.stderr
    assert files_in(site) == fresh and "replacing" not in done.stdout


def test_an_earlier_export_is_replaced_whole_and_nothing_it_did_not_write_is_removed(
    demo: Path, tmp_path: Path, fresh: dict[str, bytes]
) -> None:
    site = tmp_path / "site"
    both = p2w_rt(demo, "view", "--export", str(site), "earlier", "later")
    assert both.returncode == 0, both.stderr
    (compare,) = site.glob("compare-*.html")
    compare.write_text("my notes on the comparison")  # changed since the export wrote it: no longer its file
    (site / "notes.txt").write_text("mine")
    (site / "blobs" / "mine.png").write_bytes(b"mine")
    (site / "mine").mkdir()
    later_pages = set(files_in(site)) - set(fresh) - {compare.name, "notes.txt", "blobs/mine.png"}
    assert later_pages, "the two runs' export has pages, blobs and plots the export of earlier has not"
    done = p2w_rt(demo, "view", "--export", str(site), "earlier")
    assert done.returncode == 0, done.stderr
    kept = {compare.name: b"my notes on the comparison", "notes.txt": b"mine", "blobs/mine.png": b"mine"}
    assert files_in(site) == fresh | kept
    assert f"to {site}, replacing the export that was there; open" in done.stdout
    assert (site / "mine").is_dir()
    assert not dangling_links(site)
    assert sorted(journal(site)) == sorted(fresh), "the journal lists this export's files, no earlier one's"


def test_a_folder_that_is_not_an_export_is_refused_unless_forced(
    demo: Path, tmp_path: Path, fresh: dict[str, bytes]
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("my home page")
    (site / "notes.txt").write_text("mine")
    refused = p2w_rt(demo, "view", "--export", str(site), "earlier")
    assert refused.returncode == 1
    assert refused.stderr.splitlines() == [
        f"error: {site}: not empty and not a p2w-rt view export; export into a new or empty folder, or pass "
        "--force to write into it (files of the export's names are replaced, nothing is deleted)"
    ]
    assert files_in(site) == {"index.html": b"my home page", "notes.txt": b"mine"}
    assert not (site / JOURNAL).exists()
    forced = p2w_rt(demo, "view", "--export", str(site), "--force", "earlier")
    assert forced.returncode == 0, forced.stderr
    assert files_in(site) == fresh | {"notes.txt": b"mine"}
    again = p2w_rt(demo, "view", "--export", str(site), "earlier")  # now the folder holds an export: replaced
    assert again.returncode == 0 and "replacing the export that was there" in again.stdout, again.stderr
    assert files_in(site) == fresh | {"notes.txt": b"mine"}


def test_a_journal_naming_files_outside_the_folder_removes_nothing(demo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "kept.html"
    outside.write_text("mine")
    site = tmp_path / "site"
    site.mkdir()
    header = json.dumps({"p2w-rt": "view --export", "journal": 1})
    line = json.dumps({"file": "../kept.html", "sha256": hashlib.sha256(b"mine").hexdigest()})
    (site / JOURNAL).write_text(f"{header}\n{line}\n")
    done = p2w_rt(demo, "view", "--export", str(site), "earlier")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [f"error: {site}: '../kept.html' is not a name inside the export folder"]
    assert outside.read_text() == "mine" and not (site / "index.html").exists()


@pytest.mark.parametrize("before", ["nothing", "an export of both runs"])
def test_an_export_killed_halfway_leaves_no_index_and_the_next_one_completes_the_folder(
    demo: Path, tmp_path: Path, fresh: dict[str, bytes], before: str
) -> None:
    site = tmp_path / "site"
    if before != "nothing":
        both = p2w_rt(demo, "view", "--export", str(site), "earlier", "later")
        assert both.returncode == 0, both.stderr
    mark = tmp_path / "mark"
    mark.touch()  # a file's time on the same clock: this export's pages are written after it
    proc = start_export(demo, site, "earlier")

    def among_the_episode_pages() -> bool:
        try:
            return any(p.stat().st_mtime_ns > mark.stat().st_mtime_ns for p in site.glob("episode-*.html"))
        except FileNotFoundError:  # a page of the earlier export, removed between the listing and its stat
            return False

    wait_for("its episode pages", proc, among_the_episode_pages)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    assert not (site / "index.html").exists(), "a folder half written must not open as a complete export"
    done = p2w_rt(demo, "view", "--export", str(site), "earlier")
    assert done.returncode == 0, done.stderr
    assert "replacing the export that was there" in done.stdout
    assert files_in(site) == fresh, "nothing of the killed export nor of the one before it is left"


def test_two_exports_into_one_folder_take_turns(demo: Path, tmp_path: Path, fresh: dict[str, bytes]) -> None:
    site = tmp_path / "site"
    first = start_export(demo, site, "earlier")
    wait_for("its first file", first, lambda: site.is_dir() and any(site.iterdir()))
    os.kill(first.pid, signal.SIGSTOP)  # held mid-export, so the second one surely meets it
    try:
        second = p2w_rt(demo, "view", "--export", str(site), "earlier")
    finally:
        os.kill(first.pid, signal.SIGCONT)
    assert second.returncode == 1
    assert second.stderr.splitlines() == [
        f"error: {site}: another p2w-rt view --export is writing into this folder; let it finish, or export to "
        "another folder"
    ]
    out, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    assert files_in(site) == fresh
    racing = [start_export(demo, site, "earlier") for _ in range(2)]  # started together: turns, or one refused
    ended = [(proc, *proc.communicate(timeout=300)) for proc in racing]
    assert all("Traceback" not in err for _, _, err in ended)
    assert sorted(proc.returncode for proc, _, _ in ended) in ([0, 0], [0, 1])
    assert files_in(site) == fresh


def test_a_folder_whose_filesystem_has_no_locks_is_exported_with_a_warning(
    demo: Path, tmp_path: Path, fresh: dict[str, bytes]
) -> None:
    """As on an NFS, SMB or FUSE mount without locks: the kernel refuses ``flock`` (ENOLCK), every other call works."""
    skip_unless_flock_can_be_refused()
    site = tmp_path / "site"
    for _ in range(2):  # into a missing folder, then over that export
        command = [str(Path(sys.executable).with_name("p2w-rt")), "--db", str(demo), "view", "--export", str(site)]
        done = subprocess.run(refusing_flock([*command, "earlier"]), capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert done.stderr.splitlines() == [
            f"warning: {site}: exported without a lock, its filesystem has none (No locks available); another export "
            "into this folder at the same time would mix its files with this one's"
        ]
        assert files_in(site) == fresh


def test_the_journal_is_written_in_one_order_whatever_the_hash_seed(demo: Path, tmp_path: Path) -> None:
    """Two machines (here: two hash seeds) exporting the same runs write the same journal: the recorded pages go out
    in one order, not a set's."""
    journals = []
    for seed in ("1", "98765"):
        out = tmp_path / f"seed-{seed}"
        command = [str(Path(sys.executable).with_name("p2w-rt")), "--db", str(demo), "view", "--export", str(out)]
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([*command, "earlier", "later"], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        journals.append((out / JOURNAL).read_text())
    doms = [name for name in journal(tmp_path / "seed-1") if name.startswith("dom/")]
    assert len(doms) >= 2, "the demo runs should export several recorded pages"
    assert doms == sorted(doms)
    assert journals[0] == journals[1]


def journal_listing(*names: str) -> str:
    """A journal listing ``names`` (each with a sha256 no file has)."""
    header = json.dumps({"p2w-rt": "view --export", "journal": 1})
    return "".join([f"{header}\n", *(json.dumps({"file": name, "sha256": "0" * 64}) + "\n" for name in names)])


def test_a_journal_naming_a_file_with_a_nul_is_refused_in_one_line(demo: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / JOURNAL).write_text(journal_listing("index.html\0x"))
    (site / "index.html").write_text("mine")
    done = p2w_rt(demo, "view", "--export", str(site), "earlier")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [f"error: {site}: 'index.html\\x00x' is not a name inside the export folder"]
    assert (site / "index.html").read_text() == "mine"


def test_a_journal_naming_a_file_no_folder_can_hold_is_passed_over(
    demo: Path, tmp_path: Path, fresh: dict[str, bytes]
) -> None:
    """A name longer than a file name may be (the kernel's limit) names nothing there: nothing to remove."""
    site = tmp_path / "site"
    site.mkdir()
    (site / JOURNAL).write_text(journal_listing(f"{'a' * 300}/x.html", "b" * 300))
    done = p2w_rt(demo, "view", "--export", str(site), "earlier")
    assert done.returncode == 0, done.stderr
    assert "replacing the export that was there" in done.stdout and files_in(site) == fresh


def test_force_never_writes_through_a_journal_linked_to_a_file_elsewhere(
    demo: Path, tmp_path: Path, fresh: dict[str, bytes]
) -> None:
    """A hard link named like the journal is someone's file: the export's journal replaces the name, never its
    content."""
    outside = tmp_path / "mine.txt"
    outside.write_text("my notes")
    site = tmp_path / "site"
    site.mkdir()
    os.link(outside, site / JOURNAL)
    done = p2w_rt(demo, "view", "--export", str(site), "--force", "earlier")
    assert done.returncode == 0, done.stderr
    assert outside.read_text() == "my notes"
    assert files_in(site) == fresh and sorted(journal(site)) == sorted(fresh)


def test_a_journal_larger_than_any_export_writes_is_not_read(
    demo: Path, tmp_path: Path, fresh: dict[str, bytes]
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    with (site / JOURNAL).open("wb") as f:  # a header, then one line as long as a file may be (sparse: no disk)
        f.write(journal_listing().encode() + b'{"file": "')
        f.truncate(65 * 2**20)
    done = p2w_rt(demo, "view", "--export", str(site), "earlier")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"error: {site / JOURNAL}: over 64 MiB, not the journal of a p2w-rt view export; remove it, or pass --force "
        "to write into the folder (nothing is deleted)"
    ]
    forced = p2w_rt(demo, "view", "--export", str(site), "--force", "earlier")
    assert forced.returncode == 0, forced.stderr
    assert files_in(site) == fresh
