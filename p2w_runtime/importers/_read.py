"""Reading one runner file: JSON that the store can hold, validated against that runner's file model.

Every check that can fail happens here, before the import writes anything (``parse_json`` refuses what the
store cannot hold: a lone surrogate, a number JSON has not, deep nesting).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from p2w_runtime.data import BadValue, NestedTooDeep, parse_json
from p2w_runtime.importers._errors import TrajectoryImportError

T = TypeVar("T")


def read_json(path: Path) -> Any:
    try:
        Path(path).name.encode("utf-8")
    except UnicodeEncodeError:
        raise TrajectoryImportError(path, "file name", "not valid UTF-8; the episode records its file name") from None
    try:
        data = parse_json(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TrajectoryImportError(path, None, "file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TrajectoryImportError(path, None, f"cannot read ({exc})") from None
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        raise TrajectoryImportError(path, None, f"invalid JSON at {where}: {exc.msg}") from None
    except NestedTooDeep as exc:
        raise TrajectoryImportError(path, None, str(exc)) from None
    except BadValue as exc:
        raise TrajectoryImportError(path, exc.field or None, exc.reason) from None
    return data


def field_path(loc: tuple[int | str, ...]) -> str:
    """Pydantic's error location as the importer names fields: ``trajectory[2].action``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def validated(adapter: TypeAdapter[T], data: Any, path: Path, what: str) -> T:
    """``data`` as the runner's file model; the first validation error names its field."""
    try:
        return adapter.validate_python(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        message = "missing" if first["type"] == "missing" else first["msg"]
        if not first["loc"]:
            message = f"{message} ({what})"
        raise TrajectoryImportError(path, field_path(first["loc"]) or None, message) from None
