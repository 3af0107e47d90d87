"""Temporary files and folders named for the process that made them, so that the next p2w-rt removes what a killed
one left.

A process killed by SIGKILL, the OOM killer or a power cut runs no clean-up, and what it kept in the temp dir (a
rerun's copy of its run, an episode's HAR folder, an import's private copy of its bundle, an outside agent's
``TMPDIR``) would stay there for good. Each is named ``p2w-KIND-NS.PID.`` and a random tail: PID is its maker's and NS
its maker's PID namespace, so that processes of two containers sharing one temp dir never judge each other's. Whoever
makes one first removes those of its user and namespace whose maker is gone
(docs/design/temp-files.md).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_NAME = re.compile(r"p2w-[a-z]+(?:-[a-z]+)*-(\d+)\.(\d+)\.")


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` of this machine still runs (a claim's holder, a scratch folder's maker)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


@contextmanager
def scratch_folder(kind: str) -> Iterator[Path]:
    """A new folder of this process's (``new_scratch_folder``), removed with what it holds when the block ends."""
    folder = new_scratch_folder(kind)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def new_scratch_folder(kind: str) -> Path:
    """A new empty folder in the temp dir (mode 0700), named for ``kind`` and this process; the caller removes it.
    The temp dir is swept first (``sweep``: one listing, well under a millisecond for a thousand entries)."""
    folder = Path(tempfile.gettempdir())
    sweep(folder)
    return Path(tempfile.mkdtemp(prefix=_prefix(kind), dir=folder))


def new_scratch_file(kind: str, suffix: str) -> tuple[int, Path]:
    """A new empty file in the temp dir (mode 0600), open (its descriptor) and named for ``kind`` and this process;
    the temp dir swept first."""
    folder = Path(tempfile.gettempdir())
    sweep(folder)
    fd, name = tempfile.mkstemp(prefix=_prefix(kind), suffix=suffix, dir=folder)
    return fd, Path(name)


def sweep(folder: Path) -> list[str]:
    """Remove from ``folder`` the scratch files and folders of this user whose maker, in this PID namespace, is gone;
    returns their names. One removed meanwhile by another sweep, or not this user's, is passed over."""
    namespace, uid = _namespace(), os.getuid()
    removed: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        made = _NAME.match(entry.name)
        if made is None or int(made[1]) != namespace or process_alive(int(made[2])):
            continue
        try:
            if entry.stat(follow_symlinks=False).st_uid != uid:
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)
        except OSError:
            continue
        removed.append(entry.name)
    return removed


def _prefix(kind: str) -> str:
    return f"p2w-{kind}-{_namespace()}.{os.getpid()}."


def _namespace() -> int:
    """This process's PID namespace (the inode of ``/proc/self/ns/pid``); 0 where ``/proc`` does not tell."""
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0
