"""JSON from files a user hands us, with its nesting bounded.

``json.loads`` raises ``RecursionError`` on ``[[[[...]]]]`` a few thousand levels deep, and what parses below
that still breaks pydantic's and orjson's serialisers later (limits of a few hundred levels). Real task, history
and trajectory files nest fewer than 20 levels, so anything beyond ``MAX_DEPTH`` is refused at the door.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64


class NestedTooDeep(ValueError):
    """The document nests objects and arrays deeper than ``MAX_DEPTH``."""


def parse_json(text: str) -> Any:
    """``json.loads`` that raises ``NestedTooDeep`` beyond ``MAX_DEPTH`` levels (``JSONDecodeError`` as usual)."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise NestedTooDeep(f"invalid JSON: nested more than {MAX_DEPTH} levels deep") from None
    if _deeper_than(value, MAX_DEPTH):
        raise NestedTooDeep(f"invalid JSON: nested more than {MAX_DEPTH} levels deep")
    return value


def _deeper_than(value: Any, limit: int) -> bool:
    stack = [(value, 1)] if isinstance(value, dict | list) else []
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False
