"""Persona memory banks ("user history"): ``{persona}.json`` files of browsing-history entries.

Entry ids are positions in the bank, because that is what the Persona2Web runners
record as "retrieved memory index"; the file order is therefore significant and kept.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from p2w_rt.schemas import MemoryEntry, content_hash
from p2w_runtime.data._errors import DataError
from p2w_runtime.data._json import BadValue, NestedTooDeep, parse_json
from p2w_runtime.errors import clip

M = TypeVar("M", bound=BaseModel)

ENTRY_LIST_KEYS = ("memory_bank", "entries", "memories", "items")
"""Top-level keys under which the entry list may sit, in order of preference."""


def _read_file(path: Path) -> bytes:
    """A file's bytes, ``DataError`` naming it; a FIFO or a device is refused unopened (opening one may block)."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise DataError(f"{path}: not a regular file")
        return path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{path}: file not found") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc})") from None


def read_json(path: Path) -> Any:
    """Parse a JSON file, turning I/O and syntax problems into a ``DataError`` naming the file."""
    return decode_json(_read_file(path), path)


def read_json_lines(path: Path) -> list[tuple[int, Any]]:
    """Each non-blank line of a JSON-lines file, parsed, with its number; a ``DataError`` names the file and line."""
    text = _utf8(_read_file(path), path)
    # split("\n"), not splitlines(): a JSON string may hold U+2028, which splitlines() breaks a line at
    return [(n, _parse(line, f"{path}:{n}")) for n, line in enumerate(text.split("\n"), 1) if line.strip()]


def decode_json(data: bytes, where: str | Path) -> Any:
    """Parse a file's bytes (read from disk, or a blob a run carries); ``DataError`` naming ``where``."""
    return _parse(_utf8(data, where), where)


def _utf8(data: bytes, where: str | Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{where}: cannot read ({exc})") from None


def _parse(text: str, where: str | Path) -> Any:
    try:
        return parse_json(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{where}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except (NestedTooDeep, BadValue) as exc:
        raise DataError(f"{where}: {exc}") from None


def validated(model: type[M], raw: Any, where: str) -> M:
    """``raw`` as ``model``; else one ``DataError``: ``where``, then the first pydantic error as ``field: message``
    (the most useful one to show on one line)."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(entry)"
        more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise DataError(f"{where}: {field}: {first['msg']}{more}") from None


def _entry_list(path: str | Path, data: Any) -> tuple[str, list[Any]]:
    if isinstance(data, list):
        return "", data
    if isinstance(data, dict):
        for key in ENTRY_LIST_KEYS:
            if key in data:
                if not isinstance(data[key], list):
                    raise DataError(f"{path}: field {key!r} must be a list of entries, got {type(data[key]).__name__}")
                return key, data[key]
        keys = ", ".join(ENTRY_LIST_KEYS)
        raise DataError(f"{path}: no entry list; expected a top-level list or one of the keys {keys}")
    raise DataError(f"{path}: expected a JSON object or list, got {type(data).__name__}")


def load_memory_bank(path: Path) -> list[MemoryEntry]:
    """Load and validate every entry of a memory bank; the list index is the entry id."""
    path = Path(path)
    return parse_memory_bank(read_json(path), path)


def parse_memory_bank(data: Any, path: str | Path) -> list[MemoryEntry]:
    """Validate a parsed bank file (``path`` names it in errors: a file, or a blob of a run)."""
    key, raw_entries = _entry_list(path, data)
    if not raw_entries:
        raise DataError(f"{path}: memory bank is empty")
    where = f"{key}[{{index}}]" if key else "[{index}]"
    entries: list[MemoryEntry] = []
    for index, raw in enumerate(raw_entries):
        if not isinstance(raw, dict):
            raise DataError(f"{path}: entry {where.format(index=index)} must be an object, got {type(raw).__name__}")
        entry = validated(MemoryEntry, raw, f"{path}: entry {where.format(index=index)}")
        if not _is_date(entry.timestamp):
            raise DataError(
                f"{path}: entry {where.format(index=index)}: timestamp: {clip(entry.timestamp)!r} is not an ISO 8601 "
                "date or date-time (2024-01-31, 2024-01-31T10:26:18)"
            )
        entries.append(entry)
    return entries


def _is_date(text: str) -> bool:
    """Whether ``text`` is a date or date-time as ``datetime.fromisoformat`` reads ISO 8601 (timezone optional).

    Checked when a bank is loaded, not in ``MemoryEntry``: entries already recorded keep loading as they were.
    """
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def list_personas(history_dir: Path) -> list[str]:
    """Personas that have a memory bank in ``history_dir``, sorted."""
    history_dir = Path(history_dir)
    if not history_dir.is_dir():
        raise DataError(f"{history_dir}: history directory not found")
    return sorted(p.stem for p in history_dir.glob("*.json") if p.is_file())


def find_memory_bank(history_dir: Path, persona: str) -> Path:
    """The memory bank file of ``persona``; a clear error when the persona has none (a name with a path in it, or
    one too long for the file system, names no file of the folder)."""
    history_dir = Path(history_dir)
    path = history_dir / f"{persona}.json"
    try:
        if path.parent == history_dir and path.is_file():
            return path
    except OSError:  # ENAMETOOLONG: is_file() passes only "no such file" errors as False
        pass
    known = list_personas(history_dir)
    raise DataError(f"{path}: no memory bank for persona {persona!r} ({len(known)} personas in {history_dir})")


def memory_bank_hash(entries: Sequence[MemoryEntry]) -> str:
    """Content hash of a bank: changes when any entry or the order (= the entry ids) changes."""
    return content_hash([e.model_dump(mode="json") for e in entries])
