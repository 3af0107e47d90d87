"""AgenticShop files: user profiles (``*_user_profile.json``) and curated results (the reference's output).

Every record is validated before any is returned, and a bad one is one ``DataError`` naming the file,
the record (by index and user id) and the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from p2w_rt.schemas import CurationResult, ShopProfile
from p2w_runtime.data._errors import DataError
from p2w_runtime.data._memory_bank import read_json, read_json_lines, validated

M = TypeVar("M", bound=BaseModel)


def _records(path: Path, model: type[M], what: str) -> list[M]:
    data: Any = read_json(path)
    if not isinstance(data, list):
        raise DataError(f"{path}: expected a JSON list of {what}, got {type(data).__name__}")
    out: list[M] = []
    for index, raw in enumerate(data):
        if not isinstance(raw, dict):
            raise DataError(f"{path}: [{index}] must be an object, got {type(raw).__name__}")
        who = f" (user {str(raw.get('user'))[:60]})" if raw.get("user") else ""
        out.append(validated(model, raw, f"{path}: [{index}]{who}"))
    return out


PROFILE_SUFFIX = "_user_profile.json"


def load_profiles(path: Path) -> list[ShopProfile]:
    """Every profile of one file or of every ``*_user_profile.json`` under a folder.

    The category is the file's prefix unless a profile names it; (category, user) must be unique.
    """
    path = Path(path)
    files = sorted(path.glob("*_user_profile.json")) if path.is_dir() else [path]
    if not files:
        raise DataError(f"{path}: no *_user_profile.json file")
    profiles: list[ShopProfile] = []
    seen: dict[str, Path] = {}
    for file in files:
        category = file.name.removesuffix(PROFILE_SUFFIX) if file.name.endswith(PROFILE_SUFFIX) else ""
        for p in _records(file, ShopProfile, "user profiles"):
            if not p.category and category:
                p = p.model_copy(update={"category": category})
            if p.task_id in seen:
                raise DataError(f"{file}: user {p.user} ({p.category}) is also in {seen[p.task_id]}")
            seen[p.task_id] = file
            profiles.append(p)
    if not profiles:
        raise DataError(f"{path}: no user profiles")
    return profiles


def load_curation(path: Path) -> list[CurationResult]:
    """The reference's curated results: a list of ``{"user", "search_results": [...]}``, or the same as JSON lines."""
    path = Path(path)
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return [validated(CurationResult, row, f"{path}:{n}") for n, row in read_json_lines(path)]
    return _records(path, CurationResult, "curated results")
