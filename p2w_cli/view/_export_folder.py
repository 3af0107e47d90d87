"""The folder a static export goes into: an empty one is written, a previous export is replaced whole, any other
folder is refused unless forced (``docs/design/view.md``, "Static export").

An export keeps a journal, ``DIR/.p2w-rt-export``: a header line, then a line per file (its name and sha256),
appended before the file is written. It tells an earlier export from someone's folder, and the next export removes
exactly the files it lists whose content is still what was written: a file the export did not write, or one changed
since, is never deleted. Writers of one folder take turns (a lock the kernel drops with a killed process) where its
filesystem has locks. The filesystem root and the home folder are never export folders.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from types import TracebackType

from p2w_cli.view._beneath import HELD, Beneath, partial_name
from p2w_runtime.errors import UserError

MARKER = ".p2w-rt-export"
_HEADER = json.dumps({"p2w-rt": "view --export", "journal": 1}).encode() + b"\n"
LARGEST_JOURNAL = 64 * 2**20
"""Far above the journal of any export (a line of some 150 bytes per file), far below what strains memory: a larger
one is no journal an export wrote, and is not read whole."""


class ExportFolder:
    """Files written beneath ``root`` through ``Beneath``, each listed in the journal first."""

    unlocked: str | None
    """The warning that the export goes on without the folder's lock, its filesystem having none: that leaves only
    two exports into one folder at once unguarded, which refusing would trade for no export there at all."""

    def __init__(self, root: Path, error: type[UserError], *, force: bool) -> None:
        _refuse_shared(root, error)
        self.files = Beneath(root, error)
        try:
            if (unlocked := self.files.lock()) == HELD:
                raise error(
                    f"{root}: another p2w-rt view --export is writing into this folder; let it finish, or export "
                    "to another folder"
                )
            self._previous = self._look(force)
        except BaseException:
            self.files.close()
            raise
        self.replaced = self._previous is not None
        self.unlocked = None if unlocked is None else _unlocked(root, unlocked)
        self._begun = False

    @property
    def root(self) -> Path:
        return self.files.root

    def write(self, name: str, data: bytes) -> None:
        """The first write removes the previous export: nothing is lost to an export that fails before it writes."""
        if not self._begun:
            self._begin()
        line = json.dumps({"file": name, "sha256": hashlib.sha256(data).hexdigest()}) + "\n"
        self.files.append(MARKER, line.encode())
        self.files.write(name, data)

    def _look(self, force: bool) -> dict[str, set[str]] | None:
        """The previous export's journal (file -> the sha256s written there), or None for an empty folder or one
        ``force`` lets the export write into."""
        entries = self.files.entries()
        content = self.files.read(MARKER, LARGEST_JOURNAL) if MARKER in entries else None
        if content is not None and len(content) > LARGEST_JOURNAL and not force:
            raise self.files.error(
                f"{self.root / MARKER}: over {LARGEST_JOURNAL >> 20} MiB, not the journal of a p2w-rt view export; "
                "remove it, or pass --force to write into the folder (nothing is deleted)"
            )
        if content is not None and len(content) <= LARGEST_JOURNAL and (previous := _journal(content)) is not None:
            return previous
        if entries and not force:
            raise self.files.error(
                f"{self.root}: not empty and not a p2w-rt view export; export into a new or empty folder, or pass "
                "--force to write into it (files of the export's names are replaced, nothing is deleted)"
            )
        return None

    def _begin(self) -> None:
        """Remove what the journal lists, ``index.html`` first so the folder stops looking complete, then start
        a new journal; a process killed before that keeps the old journal, and the next export goes on from it."""
        self._begun = True
        if self._previous is None:  # renamed over whatever is there: a hard link to someone's file is not written
            self.files.write(MARKER, _HEADER)
            return
        names = sorted(self._previous, key=lambda name: (name != "index.html", name))
        ours = [name for name in names if self.files.digest(name) in self._previous[name]]
        partials = [_partial(name) for name in [*names, MARKER]]  # left by an export killed while writing them
        ours += [name for name in partials if self.files.digest(name) is not None]
        for name in ours:  # every entry was looked at first: a link on the way stops the export before any removal
            self.files.remove(name)
        for folder in sorted({name.rpartition("/")[0] for name in names} - {""}, key=lambda f: -f.count("/")):
            self.files.remove_folder(folder)
        self.files.write(MARKER, _HEADER)

    def close(self) -> None:
        self.files.close()

    def __enter__(self) -> ExportFolder:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def _refuse_shared(root: Path, error: type[UserError]) -> None:
    """The filesystem root and the home folder hold everyone's files beside the export's names (``index.html``,
    ``static/``): refused even with ``--force``, links and ``..`` resolved first."""
    try:
        where = root.resolve()
    except (OSError, RuntimeError):  # a link loop, a folder it may not read: opening it fails and says why
        return
    what = "the filesystem root" if where == Path(where.anchor) else "your home folder" if where == _home() else None
    if what is not None:
        raise error(
            f"{root}: is {what}; export into a folder of its own (even with --force: files of the export's names "
            "would be replaced there)"
        )


def _home() -> Path | None:
    try:
        home = Path.home()
    except RuntimeError:  # no HOME and no entry in the password database
        return None
    return home.resolve() if home.is_absolute() else None  # HOME="" would be the working folder


def _unlocked(root: Path, why: str) -> str:
    return (
        f"{root}: exported without a lock, its filesystem has none ({why}); another export into this folder at the "
        "same time would mix its files with this one's"
    )


def _partial(name: str) -> str:
    folder, _, base = name.rpartition("/")
    return f"{folder}/{partial_name(base)}" if folder else partial_name(base)


def _journal(content: bytes | None) -> dict[str, set[str]] | None:
    """The files a journal lists, or None if ``content`` is not one. A journal cut short by a killed process
    still counts: its header alone (or a part of it), a last line cut in two."""
    if content is None:
        return None
    if _HEADER.startswith(content):
        return {}
    head, _, rest = content.partition(b"\n")
    if head + b"\n" != _HEADER:
        return None
    listed: dict[str, set[str]] = {}
    for line in rest.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and isinstance(item.get("file"), str) and isinstance(item.get("sha256"), str):
            listed.setdefault(item["file"], set()).add(item["sha256"])
    return listed
