"""JSON Schema files generated from the models, for consumers outside Python."""

from __future__ import annotations

import json
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
    """Write every schema file and remove stale ones; returns the files written."""
    directory.mkdir(parents=True, exist_ok=True)
    schemas = generated_schemas()
    for stale in directory.glob("*.json"):
        if stale.name not in schemas:
            stale.unlink()
    written = []
    for name, schema in sorted(schemas.items()):
        path = directory / name
        path.write_text(render(schema), encoding="utf-8")
        written.append(path)
    return written


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
