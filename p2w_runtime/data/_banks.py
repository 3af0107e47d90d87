"""Where a retriever's memory banks come from: a folder of ``{persona}.json``, or the files a run carries.

Both give the same personas, entries and content hash for the same files, so a run's own banks and the folder
it was recorded from are interchangeable (docs/design/dataset.md).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from p2w_rt.schemas import MemoryEntry
from p2w_runtime.data._errors import DataError
from p2w_runtime.data._memory_bank import decode_json, find_memory_bank, list_personas, parse_memory_bank, read_json


class BankSource(Protocol):
    """The memory banks a retriever searches."""

    def personas(self) -> list[str]: ...
    def bank(self, persona: str) -> list[MemoryEntry]:
        """The persona's entries (list index = entry id); ``DataError`` for an unknown persona or a bad bank."""
        ...

    def content_hash(self) -> str:
        """Every bank's file name and bytes: a derived result over these banks is keyed on it."""
        ...


class BankFolder:
    """The ``{persona}.json`` files of a history folder."""

    def __init__(self, history_dir: Path) -> None:
        self.history_dir = Path(history_dir)

    def personas(self) -> list[str]:
        return list_personas(self.history_dir)

    def bank(self, persona: str) -> list[MemoryEntry]:
        path = find_memory_bank(self.history_dir, persona)
        return parse_memory_bank(read_json(path), path)

    def content_hash(self) -> str:
        digest = hashlib.sha256()
        for path in sorted(p for p in self.history_dir.rglob("*") if p.is_file()):
            digest.update(f"{path.relative_to(self.history_dir).as_posix()}\0".encode())
            digest.update(path.read_bytes())
        return digest.hexdigest()


class BankFiles:
    """Banks as bytes by persona (what a run carries); ``where`` names them in errors (``run 'x'``)."""

    def __init__(self, files: Mapping[str, bytes], where: str) -> None:
        self.files = dict(files)
        self.where = where

    def personas(self) -> list[str]:
        return sorted(self.files)

    def bank(self, persona: str) -> list[MemoryEntry]:
        data = self.files.get(persona)
        if data is None:
            raise DataError(f"{self.where}: no memory bank for persona {persona!r} ({len(self.files)} carried)")
        where = f"{self.where}: {persona}.json"
        return parse_memory_bank(decode_json(data, where), where)

    def content_hash(self) -> str:
        digest = hashlib.sha256()
        for persona in sorted(self.files):
            digest.update(f"{persona}.json\0".encode())
            digest.update(self.files[persona])
        return digest.hexdigest()
