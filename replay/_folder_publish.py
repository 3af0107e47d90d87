"""A folder of files published whole: written as a fresh sibling folder, then renamed into place in one step.

Tables moved into a folder one at a time can be mixed: two exports at once, or one killed between its moves, leave
files of two exports side by side. Here the files are written into ``.NAME.PID.parquet-partial`` beside the target,
and that folder becomes the target in one rename: onto nothing (or an empty folder), or, replacing an earlier
export, exchanged with it in one ``renameat2(RENAME_EXCHANGE)``. A reader of the target sees the earlier export
or the new one, never both. Exports of one target take turns through a lock on ``.NAME.parquet-lock`` beside it
(released by the kernel if the process dies); the second one is refused.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import re
from collections.abc import Iterator
from pathlib import Path

from p2w_runtime.errors import UserError

_AT_FDCWD, _RENAME_EXCHANGE = -100, 2
_UNSUPPORTED = (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP)


@contextlib.contextmanager
def published_folder(folder: Path, names: frozenset[str], *, force: bool, error: type[UserError]) -> Iterator[Path]:
    """Yield a fresh folder to write ``names`` into; once the block ends, publish it as ``folder``. Refused in one
    ``error`` line: a target holding files of other names (they would be replaced with the folder), one holding
    an earlier export (without ``force``), one another export is writing. A failure keeps no partial file, and
    with ``force`` the earlier export stays whole until the new one replaces it."""
    target = Path(os.path.realpath(folder))
    _check(folder, target, names, force, error)
    stage = target.with_name(f".{target.name}.{os.getpid()}.parquet-partial")
    lock = target.with_name(f".{target.name}.parquet-lock")
    try:
        fd = _lock(folder, lock, error)
    except OSError as exc:
        raise error(f"{folder}: cannot write the tables ({_reason(exc)})") from None
    try:
        if fd is not None:  # this export holds the target: a partial folder beside it is a killed export's
            killed = re.compile(rf"\.{re.escape(target.name)}\.[0-9]+\.parquet-(partial|earlier)")
            for left in os.listdir(target.parent):
                if killed.fullmatch(left):
                    with contextlib.suppress(OSError):  # one holding files of other names is not ours: kept
                        _remove(target.parent / left, names)
        stage.mkdir()
        yield stage
        _publish(folder, stage, target, names, force, error)
    except OSError as exc:  # pyarrow's write errors are OSErrors too
        raise error(f"{folder}: cannot write the tables ({_reason(exc)})") from None
    finally:
        with contextlib.suppress(OSError):
            _remove(stage, names)  # the earlier export after an exchange; what a failed export wrote
        if fd is not None:
            with contextlib.suppress(OSError):
                lock.unlink()  # before the lock goes: whoever opened it meanwhile finds it is no longer the lock
            os.close(fd)


def _check(folder: Path, target: Path, names: frozenset[str], force: bool, error: type[UserError]) -> None:
    if target.exists() and not target.is_dir():
        raise error(f"{folder}: exists and is not a folder")
    if target.is_dir():
        entries = sorted(os.listdir(target))
        if other := [name for name in entries if name not in names]:
            raise error(
                f"{folder}: holds {other[0]}, which no Parquet export writes; export into a new or empty folder "
                "(the tables are published as a folder of their own, replacing it whole)"
            )
        if entries and not force:
            raise error(f"{folder}: already holds {entries[0]}; use --force to replace the tables")
    if not target.parent.exists():
        raise error(f"{folder}: folder {target.parent} does not exist")


def _lock(folder: Path, lock: Path, error: type[UserError]) -> int | None:
    """The lock file's descriptor, held; None where the filesystem has no locks (the rename still publishes each
    export whole: the last one wins)."""
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held = os.fstat(fd)
        now = os.stat(lock, follow_symlinks=False)
    except BlockingIOError:
        os.close(fd)
        raise error(f"{folder}: another p2w-rt export is writing these tables; let it finish, or export to another "
                    "folder") from None  # fmt: skip
    except OSError as exc:
        if exc.errno == errno.ENOENT:  # removed by the export that held it, which has just published
            os.close(fd)
            raise error(f"{folder}: another p2w-rt export has just written these tables; run again to replace "
                        "them") from None  # fmt: skip
        os.close(fd)
        with contextlib.suppress(OSError):
            lock.unlink()
        return None
    if (held.st_dev, held.st_ino) != (now.st_dev, now.st_ino):
        os.close(fd)
        raise error(f"{folder}: another p2w-rt export is writing these tables; let it finish, or export to another "
                    "folder")  # fmt: skip
    return fd


def _publish(
    folder: Path, stage: Path, target: Path, names: frozenset[str], force: bool, error: type[UserError]
) -> None:
    """``stage`` becomes ``target``; with ``force``, the earlier export there ends up in ``stage``."""
    try:
        os.rename(stage, target)  # onto nothing or an empty folder; a folder with files in it is refused
        return
    except OSError as exc:
        if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
            raise
    _check(folder, target, names, force, error)  # what appeared meanwhile: refused as it would have been at first
    if not _exchange(stage, target):  # a filesystem without the exchange: the target is missing for a moment
        earlier = stage.with_name(stage.name.replace(".parquet-partial", ".parquet-earlier"))
        os.rename(target, earlier)
        os.rename(stage, target)
        os.rename(earlier, stage)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two folders in one step (Linux ``renameat2``); False where the system or filesystem cannot."""
    renameat2 = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if renameat2 is None:
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        return False
    raise OSError(code, os.strerror(code), str(b))


def _remove(folder: Path, names: frozenset[str]) -> None:
    """The files ``names`` in ``folder``, then the folder if nothing else is in it."""
    for name in names:
        with contextlib.suppress(FileNotFoundError):
            (folder / name).unlink()
    with contextlib.suppress(FileNotFoundError):
        folder.rmdir()


def _reason(exc: OSError) -> str:
    return exc.strerror or " ".join(str(exc).split()) or type(exc).__name__
