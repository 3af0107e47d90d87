"""Output files written whole or not at all: checked before any work, written beside the target, moved into place.

An export (a bundle, an OpenTelemetry trace file) that is interrupted leaves no partial file under the name asked
for, and without ``--force`` a file that appeared while it was written is kept, not replaced.
"""

from __future__ import annotations

import os
from pathlib import Path

from p2w_runtime.errors import UserError


def check_output(path: Path, *, force: bool, what: str, error: type[UserError]) -> None:
    """Refuse, before anything is read or written, a target that is a folder, exists (without ``force``) or whose
    folder is missing; ``what`` names the file in the message (``the bundle file``)."""
    if path.is_dir():
        raise error(f"{path}: is a directory; -o names {what}")
    if path.exists() and not force:
        raise error(f"{path}: already exists (--force replaces it)")
    if not path.parent.is_dir():
        raise error(f"{path}: folder {path.parent} does not exist")


def partial_path(path: Path) -> Path:
    """Where the file is written until it is complete: beside ``path``, named for this process."""
    return path.with_name(f".{path.name}.{os.getpid()}.partial")


def publish(partial: Path, path: Path, *, force: bool, error: type[UserError]) -> None:
    """Move the finished file into place; without ``force``, a file that appeared meanwhile is kept."""
    if force:
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
