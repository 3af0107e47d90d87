"""The ``/api/`` routes' JSON: the query functions' own values (dataclasses, pydantic payloads, the trajectory's
msgspec records) serialised as they are, field by field, so the JSON carries exactly what the page is built from."""

from __future__ import annotations

import msgspec
import pydantic_core


def _struct(value: object) -> object:
    if isinstance(value, msgspec.Struct):
        return msgspec.to_builtins(value)
    raise TypeError(f"{type(value).__name__} is not serialisable")


def as_json(value: object) -> bytes:
    """``value`` as JSON: dataclass fields, models by their JSON dump, sets and tuples as arrays, NaN as null."""
    return pydantic_core.to_json(value, fallback=_struct)
