"""Whether the events built from one file are events the store can hold, asked with the file's other checks.

The store refuses, at the append, a payload over ``MAX_EVENT_BYTES`` and one its canonical JSON cannot encode (an
integer beyond 64 bits, which a file model's ``int`` accepts). Asked here, before ``run.started``, such a file is a
bad file like any other: named in one line, skipped by ``--skip-bad``, and no unfinished run is left behind that a
resume would stop on again.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from p2w_rt.schemas import NewEvent, canonical_json
from p2w_runtime.errors import clip
from p2w_runtime.importers._errors import TrajectoryImportError
from p2w_runtime.store import MAX_EVENT_BYTES, largest_field, mib

_INT_RANGE = range(-(2**63), 2**64)
"""The integers orjson encodes (``int64`` and ``uint64``)."""


def check_storable(path: Path, events: Sequence[NewEvent]) -> None:
    """Raise ``TrajectoryImportError`` naming the first event of ``events`` the store would refuse, and why."""
    for new in events:
        payload = new.payload_dict()
        try:
            size = len(canonical_json(payload))
        except TypeError as exc:
            field, value = _wide_integer(payload, "") or ("payload", str(exc))
            raise TrajectoryImportError(
                path,
                None,
                f"its {new.type} event's {field} {clip(str(value))} is beyond the 64-bit integers the store holds",
            ) from None
        if size > MAX_EVENT_BYTES:
            step = payload.get("step")
            where = f"{new.type} event" + (f" of step {step}" if step is not None else "")
            field, shown, limit = largest_field(new.type, payload), mib(size, MAX_EVENT_BYTES), MAX_EVENT_BYTES // 2**20
            message = f"field {field} makes its {where} {shown}, over the {limit} MiB limit of an event"
            raise TrajectoryImportError(path, None, message)


def _wide_integer(value: Any, path: str) -> tuple[str, int] | None:
    """The dotted path to the first integer of ``value`` that orjson cannot encode, and that integer."""
    if isinstance(value, int) and not isinstance(value, bool):
        return None if value in _INT_RANGE else (path, value)
    parts = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, part in parts:
        if (found := _wide_integer(part, f"{path}.{key}" if path else str(key))) is not None:
            return found
    return None
