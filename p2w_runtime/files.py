"""Output files written whole or not at all: checked before any work, written beside the target, moved into place.

An export (a bundle, an OpenTelemetry trace file) that is interrupted leaves no partial file under the name asked
for, and without ``--force`` a file that appeared while it was written is kept, not replaced.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from p2w_runtime.errors import UserError


def check_output(path: Path, *, force: bool, what: str, error: type[UserError]) -> None:
    """Refuse, before anything is read or written, a target that is not a regular file (``force`` or not), exists
    (without ``force``) or whose folder is missing; ``what`` names the file in the message (``the bundle file``)."""
    _check_regular(path, what, error)
    if path.exists() and not force:
        raise error(f"{path}: already exists (--force replaces it)")
    if not path.parent.is_dir():
        raise error(f"{path}: folder {path.parent} does not exist")


def _check_regular(path: Path, what: str, error: type[UserError]) -> None:
    """Refuse an existing ``path`` that is not a regular file: moving a file into place replaces the entry itself,
    so ``--force`` would turn a symlink, or (as root) ``/dev/full``, into a regular file."""
    try:
        mode = path.lstat().st_mode
    except OSError:  # nothing there (or nothing we may look at: writing it will say)
        return
    if not stat.S_ISREG(mode):
        kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
        raise error(f"{path}: is {kind}, not a regular file; -o names {what} (nothing written)")


_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFLNK: "a symbolic link",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a named pipe",
    stat.S_IFSOCK: "a socket",
}


def partial_path(path: Path) -> Path:
    """Where the file is written until it is complete: beside ``path``, named for this process."""
    return path.with_name(f".{path.name}.{os.getpid()}.partial")


def publish(partial: Path, path: Path, *, force: bool, error: type[UserError]) -> None:
    """Move the finished file into place; without ``force``, a file that appeared meanwhile is kept, and with it,
    only a regular file is replaced (one that became a symlink or a device meanwhile is kept too)."""
    if force:
        _check_regular(path, "the output file", error)
        os.replace(partial, path)
        return
    try:
        os.link(partial, path)  # fails if path exists: no check-then-write race with a second export
    except FileExistsError:
        raise error(f"{path}: already exists (--force replaces it)") from None
    except OSError:  # a file system without hard links: check, then rename (a short race is back)
        if path.exists():
            raise error(f"{path}: already exists (--force replaces it)") from None
        os.replace(partial, path)
