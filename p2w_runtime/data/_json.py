"""JSON from files a user hands us: nesting bounded, and only the numbers JSON has.

``json.loads`` raises ``RecursionError`` on ``[[[[...]]]]`` a few thousand levels deep, and what parses below
that still breaks pydantic's and orjson's serialisers later (limits of a few hundred levels). Real task, history
and trajectory files nest fewer than 20 levels, so anything beyond ``MAX_DEPTH`` is refused at the door.

Python's decoder also takes ``NaN``, ``Infinity`` and ``-Infinity`` (and turns ``1e400`` into infinity), which
JSON does not have: a recorded payload would store them as ``null`` (orjson), changing the value silently. They
are refused here, naming the field, as is an integer of more digits than ``int()`` converts (4300), which
``json.loads`` fails on with a bare ``ValueError``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

MAX_DEPTH = 64


class NestedTooDeep(ValueError):
    """The document nests objects and arrays deeper than ``MAX_DEPTH``."""


class NotFinite(ValueError):
    """A number JSON cannot hold (``NaN``, an infinity, or one too large for a float), at ``field``."""

    def __init__(self, field: str, value: float) -> None:
        self.field = field
        self.reason = f"{_spelled(value)} is not a finite number"
        super().__init__(f"field {field}: {self.reason}" if field else self.reason)


def parse_json(text: str) -> Any:
    """``json.loads`` that raises ``NestedTooDeep`` beyond ``MAX_DEPTH`` levels and ``NotFinite`` on a number
    JSON does not have (``JSONDecodeError`` as usual)."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise NestedTooDeep(f"invalid JSON: nested more than {MAX_DEPTH} levels deep") from None
    except json.JSONDecodeError:
        raise
    except ValueError:  # an integer of more digits than int() converts: read again so that its field is named
        value = json.loads(text, parse_int=_integer)
    deep, odd = _scan(value, MAX_DEPTH)
    if deep:
        raise NestedTooDeep(f"invalid JSON: nested more than {MAX_DEPTH} levels deep")
    if odd:
        field, number = next(_non_finite(value, ""))
        raise NotFinite(field, number)
    return value


def _integer(digits: str) -> int | float:
    """A JSON integer, or an infinity when it has more digits than ``int()`` converts (``NotFinite`` then)."""
    try:
        return int(digits)
    except ValueError:
        return -math.inf if digits.startswith("-") else math.inf


def _scan(value: Any, limit: int) -> tuple[bool, bool]:
    """(nests deeper than ``limit``, holds a non-finite number), in one pass without building field paths."""
    if isinstance(value, float):
        return False, not math.isfinite(value)
    stack = [(value, 1)] if isinstance(value, dict | list) else []
    odd = False
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True, odd
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1))
            elif child.__class__ is float and not math.isfinite(child):
                odd = True
    return False, odd


def _non_finite(value: Any, where: str) -> Iterator[tuple[str, float]]:
    """Every non-finite number with its field path, named as the importers name fields: ``steps[2].reward``."""
    if isinstance(value, float) and not math.isfinite(value):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _non_finite(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _non_finite(item, f"{where}[{i}]")


def _spelled(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    return f"{'' if value > 0 else '-'}Infinity (or a number too large for a float)"
