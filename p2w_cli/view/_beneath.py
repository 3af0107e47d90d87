"""Writing files only beneath one folder: nothing already inside it (a symbolic link, a hard link) can send a
write elsewhere.

``view --export DIR`` used to write with plain paths, so a link someone left inside DIR (``DIR/blobs ->
/elsewhere``) received the export's files. Here every folder beneath DIR is opened relative to its parent without
following links, and every file is written under a fresh name and renamed over its target: the rename replaces
whatever entry was there (a link included) instead of writing through it.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from types import TracebackType

from p2w_runtime.errors import UserError

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW


class Beneath:
    """Files written by path relative to ``root`` (``"blobs/x.png"``), never outside it; ``error`` is raised,
    naming the entry, for a link found on the way or a write that fails."""

    def __init__(self, root: Path, error: type[UserError]) -> None:
        self.root, self.error = root, error
        try:
            root.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as exc:
            raise error(f"cannot write the export to {root}: {exc.strerror or exc}") from None
        self._dirs: dict[str, int] = {"": self._fd}

    def write(self, name: str, data: bytes) -> None:
        folder, _, base = name.rpartition("/")
        fd = self._folder(folder)
        self._refuse_link(fd, base, name)
        partial = f".{base}.{os.getpid()}.partial"
        try:
            out = os.open(partial, _NEW_FILE, 0o644, dir_fd=fd)
            try:
                _write_all(out, data)
            finally:
                os.close(out)
            os.replace(partial, base, src_dir_fd=fd, dst_dir_fd=fd)
        except OSError as exc:
            self._cleanup(partial, fd)
            raise self.error(f"{self.root / name}: cannot be written ({exc.strerror or exc})") from None

    def _folder(self, name: str) -> int:
        """The open folder ``name`` beneath the root, made if missing, each level opened without following links."""
        if name in self._dirs:
            return self._dirs[name]
        parent_name, _, base = name.rpartition("/")
        parent = self._folder(parent_name)
        self._refuse_link(parent, base, name)
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

    def _refuse_link(self, parent: int, base: str, name: str) -> None:
        try:
            mode = os.stat(base, dir_fd=parent, follow_symlinks=False).st_mode
        except FileNotFoundError:
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


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
