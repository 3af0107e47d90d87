"""Files written, read and removed only beneath one folder: nothing already inside it (a symbolic link, a hard
link, a name with ``..``) can send an operation elsewhere.

``view --export DIR`` used to write with plain paths, so a link someone left inside DIR (``DIR/blobs ->
/elsewhere``) received the export's files. Here every folder beneath DIR is opened relative to its parent without
following links, and every file is written under a fresh name and renamed over its target: the rename replaces
whatever entry was there (a link included) instead of writing through it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

from p2w_runtime.errors import UserError

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
_CHUNK = 1 << 20
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
"""``O_NONBLOCK``: a named pipe in the folder fails at once instead of waiting for a peer (regular files ignore it)."""
HELD = "held by another process"


def partial_name(base: str) -> str:
    """The fresh name a file is written under before its rename: fixed, so a later export finds one a killed
    export left (writers of one folder take turns, ``lock``)."""
    return f".{base}.partial"


class Beneath:
    """Files by path relative to ``root`` (``"blobs/x.png"``), never outside it; ``error`` is raised, naming the
    entry, for a link found on the way, a name leaving the folder, or an operation that fails."""

    def __init__(self, root: Path, error: type[UserError]) -> None:
        self.root, self.error = root, error
        try:
            root.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as exc:
            raise error(f"cannot write the export to {root}: {exc.strerror or exc}") from None
        self._dirs: dict[str, int] = {"": self._fd}

    def lock(self) -> str | None:
        """Take the folder for this process until ``close`` (released by the kernel if the process dies); else why
        not: ``HELD`` when another process holds it, or the filesystem's refusal (some NFS, SMB and FUSE mounts
        have no such locks: ENOLCK, EOPNOTSUPP)."""
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return HELD
        except OSError as exc:
            return exc.strerror or str(exc)
        return None

    def entries(self) -> list[str]:
        """The names directly in the root folder."""
        return os.listdir(self._fd)

    def write(self, name: str, data: bytes) -> None:
        folder, base = self._split(name)
        fd = self._folder(folder)
        self._refuse_link(fd, base, name)
        partial = partial_name(base)
        try:
            _write_file(fd, partial, _NEW_FILE, data)
            os.replace(partial, base, src_dir_fd=fd, dst_dir_fd=fd)
        except OSError as exc:
            if not isinstance(exc, FileExistsError):  # a partial this write did not make stays
                self._cleanup(partial, fd)
            raise self.error(f"{self.root / name}: cannot be written ({exc.strerror or exc})") from None

    def append(self, name: str, data: bytes) -> None:
        """Add ``data`` to the end of the file ``name``, made if missing, in place: a process killed while appending
        leaves a prefix of ``data``."""
        folder, base = self._split(name)
        fd = self._folder(folder)
        self._refuse_link(fd, base, name)
        try:
            _write_file(fd, base, _APPEND, data)
        except OSError as exc:
            raise self.error(f"{self.root / name}: cannot be written ({exc.strerror or exc})") from None

    def read(self, name: str, limit: int) -> bytes | None:
        """The content of the regular file ``name``, cut after ``limit + 1`` bytes (so a caller tells a file over
        ``limit`` without holding it); None if there is none (missing, a link, a folder)."""
        with self._open_file(name) as fd:
            if fd is None:
                return None
            chunks, left = [], limit + 1
            while left and (chunk := os.read(fd, min(left, _CHUNK))):
                chunks.append(chunk)
                left -= len(chunk)
            return b"".join(chunks)

    def digest(self, name: str) -> str | None:
        """The sha256 of the regular file ``name``, read a chunk at a time; None as for ``read``."""
        with self._open_file(name) as fd:
            if fd is None:
                return None
            sha = hashlib.sha256()
            for chunk in iter(lambda: os.read(fd, _CHUNK), b""):
                sha.update(chunk)
            return sha.hexdigest()

    def remove(self, name: str) -> None:
        """Unlink the entry ``name`` (a link itself, never its target); nothing if it is missing."""
        folder, base = self._split(name)
        fd = self._existing(folder)
        try:
            if fd is not None:
                os.unlink(base, dir_fd=fd)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise self.error(f"{self.root / name}: cannot be removed ({exc.strerror or exc})") from None

    def remove_folder(self, name: str) -> None:
        """Remove the folder ``name`` if it is empty; a folder holding anything stays."""
        parent_name, base = self._split(name)
        parent = self._existing(parent_name)
        if parent is None:
            return
        with contextlib.suppress(OSError):  # not empty, missing, or a link (rmdir never removes a link)
            os.rmdir(base, dir_fd=parent)
            if name in self._dirs:
                os.close(self._dirs.pop(name))

    @contextlib.contextmanager
    def _open_file(self, name: str) -> Iterator[int | None]:
        folder, base = self._split(name)
        parent = self._existing(folder)
        try:
            fd = None if parent is None else os.open(base, _READ, dir_fd=parent)
        except OSError:
            fd = None
        if fd is not None and not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            fd = None
        try:
            yield fd
        finally:
            if fd is not None:
                os.close(fd)

    def _split(self, name: str) -> tuple[str, str]:
        """(folder, base) of ``name``, refused unless each part is a plain name (no ``..``, no absolute path, no NUL,
        which no file name holds)."""
        if not name or "\0" in name or any(part in ("", ".", "..") for part in name.split("/")):
            raise self.error(f"{self.root}: {name!r} is not a name inside the export folder")
        folder, _, base = name.rpartition("/")
        return folder, base

    def _folder(self, name: str) -> int:
        """The open folder ``name`` beneath the root, made if missing."""
        if (found := self._existing(name)) is not None:
            return found
        parent_name, base = self._split(name)
        parent = self._folder(parent_name)
        try:
            os.mkdir(base, dir_fd=parent)
        except FileExistsError:
            pass
        except OSError as exc:
            raise self.error(f"{self.root / name}: cannot make the folder ({exc.strerror or exc})") from None
        try:
            fd = os.open(base, _DIR_FLAGS, dir_fd=parent)
        except OSError as exc:
            raise self.error(f"{self.root / name}: not a folder the export can write into ({exc.strerror})") from None
        self._dirs[name] = fd
        return fd

    def _existing(self, name: str) -> int | None:
        """The open folder ``name`` beneath the root, each level opened without following links; None if there is
        no such folder."""
        if name in self._dirs:
            return self._dirs[name]
        parent_name, base = self._split(name)
        parent = self._existing(parent_name)
        if parent is None:
            return None
        self._refuse_link(parent, base, name)
        try:
            fd = os.open(base, _DIR_FLAGS, dir_fd=parent)
        except OSError:
            return None
        self._dirs[name] = fd
        return fd

    def _refuse_link(self, parent: int, base: str, name: str) -> None:
        try:
            mode = os.stat(base, dir_fd=parent, follow_symlinks=False).st_mode
        except OSError:  # missing, or no name a file can have (too long): the operation itself says what it meets
            return
        if stat.S_ISLNK(mode):
            raise self.error(
                f"{self.root / name}: is a symbolic link inside the export folder; refusing to write through it "
                "(remove it, or export to a new folder)"
            )

    @staticmethod
    def _cleanup(partial: str, fd: int) -> None:
        with contextlib.suppress(OSError):
            os.unlink(partial, dir_fd=fd)

    def close(self) -> None:
        for fd in self._dirs.values():
            os.close(fd)
        self._dirs.clear()

    def __enter__(self) -> Beneath:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def _write_file(folder_fd: int, name: str, flags: int, data: bytes) -> None:
    """``data`` into ``name`` of the folder ``folder_fd``, opened with ``flags``."""
    out = os.open(name, flags, 0o644, dir_fd=folder_fd)
    try:
        _write_all(out, data)
    finally:
        os.close(out)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
