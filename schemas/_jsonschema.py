"""JSON Schema files generated from the models, for consumers outside Python."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter

from p2w_rt.schemas._dataset import GroundTruth, MemoryEntry, TaskFile
from p2w_rt.schemas._envelope import Event
from p2w_rt.schemas._payloads import PAYLOAD_TYPES

JSON_DIR = Path(__file__).parent / "json"


def generated_schemas() -> dict[str, dict[str, Any]]:
    """File name -> JSON Schema, for every public model."""
    out: dict[str, dict[str, Any]] = {"event.json": TypeAdapter(Event).json_schema()}
    for cls in PAYLOAD_TYPES:
        name = cls.model_fields["type"].default
        schema = cls.model_json_schema()
        schema["x-schema-version"] = cls.SCHEMA_VERSION
        out[f"payload.{name}.json"] = schema
    models: tuple[type[BaseModel], ...] = (TaskFile, MemoryEntry, GroundTruth)
    for model in models:
        out[f"dataset.{model.__name__}.json"] = model.model_json_schema()
    return out


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def export_schemas(directory: Path = JSON_DIR) -> list[Path]:
    """Write every schema file and remove stale ones; returns the files written.

    Every file is written under a temporary name first and renamed over its target once all are written, so an
    ``OSError`` (raised as it came) leaves no half-written file, no temporary one and none of the folders it made.
    """
    schemas = generated_schemas()
    made = _make_folders(directory)
    staged: list[tuple[Path, Path]] = []
    try:
        for name, schema in sorted(schemas.items()):
            staged.append((directory / f".{name}.{os.getpid()}.partial", directory / name))
            with staged[-1][0].open("x", encoding="utf-8") as out:
                out.write(render(schema))
        for partial, path in staged:
            partial.replace(path)
    except OSError:
        for partial, _ in staged:
            partial.unlink(missing_ok=True)
        _remove_folders(made)
        raise
    for stale in directory.glob("*.json"):
        if stale.name not in schemas:
            stale.unlink()
    return [path for _, path in staged]


def _make_folders(directory: Path) -> list[Path]:
    """``directory`` and its missing parents made (``mkdir(parents=True)``); returns those made, deepest first."""
    try:
        directory.mkdir()
    except FileExistsError:
        return []
    except FileNotFoundError:
        made = _make_folders(directory.parent)
        try:
            directory.mkdir()
        except OSError:
            _remove_folders(made)
            raise
        return [directory, *made]
    return [directory]


def _remove_folders(made: list[Path]) -> None:
    """Take back the folders ``_make_folders`` made, deepest first (one something else wrote into stays)."""
    for folder in made:
        with contextlib.suppress(OSError):
            folder.rmdir()


def drifted_schemas(directory: Path = JSON_DIR) -> list[str]:
    """Names of schema files that are missing, stale or differ from the models."""
    schemas = generated_schemas()
    drift = [
        name
        for name, schema in schemas.items()
        if not (directory / name).exists() or (directory / name).read_text(encoding="utf-8") != render(schema)
    ]
    drift += [p.name for p in directory.glob("*.json") if p.name not in schemas]
    return sorted(drift)
