"""JSON from files a user hands us: nesting bounded, and only the numbers JSON has.

``json.loads`` raises ``RecursionError`` on ``[[[[...]]]]`` a few thousand levels deep, and what parses below
that still breaks pydantic's and orjson's serialisers later (limits of a few hundred levels). Real task, history
and trajectory files nest fewer than 20 levels, so anything beyond ``MAX_DEPTH`` is refused at the door.

Python's decoder also takes ``NaN``, ``Infinity`` and ``-Infinity`` (and turns ``1e400`` into infinity), which
JSON does not have: a recorded payload would store them as ``null`` (orjson), changing the value silently. They
are refused here, naming the field, as is an integer of more digits than ``int()`` converts (4300), which
``json.loads`` fails on with a bare ``ValueError``, and a string (value or key) holding a lone surrogate
(``"\\ud800"``), which the decoder takes but no UTF-8 writer can store: it failed in orjson when the first event
was hashed, after the run was started.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any

MAX_DEPTH = 64
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""How a surrogate gets into text decoded from UTF-8 (which holds none itself): paired or not, escaped."""


class NestedTooDeep(ValueError):
    """The document nests objects and arrays deeper than ``MAX_DEPTH``."""


class BadValue(ValueError):
    """A value the store cannot hold as it was written, at ``field`` (its path, ``""`` for the whole document)."""

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"field {field}: {reason}" if field else reason)


class NotFinite(BadValue):
    """A number JSON cannot hold (``NaN``, an infinity, or one too large for a float)."""

    def __init__(self, field: str, value: float) -> None:
        super().__init__(field, f"{_spelled(value)} is not a finite number")


class LoneSurrogate(BadValue):
    """A string holding half of a UTF-16 surrogate pair, which is not Unicode text."""

    def __init__(self, field: str, text: str) -> None:
        at = _SURROGATE.search(text)
        where = at.start() if at else 0
        super().__init__(field, f"lone surrogate {text[where]!r} at character {where}; not valid Unicode")


def parse_json(text: str) -> Any:
    """``json.loads`` that raises ``NestedTooDeep`` beyond ``MAX_DEPTH`` levels, ``NotFinite`` on a number JSON
    does not have and ``LoneSurrogate`` on a string that is not Unicode (``JSONDecodeError`` as usual)."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise NestedTooDeep(f"invalid JSON: nested more than {MAX_DEPTH} levels deep") from None
    except json.JSONDecodeError:
        raise
    except ValueError:  # an integer of more digits than int() converts: read again so that its field is named
        value = json.loads(text, parse_int=_integer)
    deep, odd = _scan(value, MAX_DEPTH, strings=_SURROGATE_ESCAPE.search(text) is not None)
    if deep:
        raise NestedTooDeep(f"invalid JSON: nested more than {MAX_DEPTH} levels deep")
    if odd:
        raise next(_refusals(value, ""))
    return value


def _integer(digits: str) -> int | float:
    """A JSON integer, or an infinity when it has more digits than ``int()`` converts (``NotFinite`` then)."""
    try:
        return int(digits)
    except ValueError:
        return -math.inf if digits.startswith("-") else math.inf


def _odd(value: object) -> bool:
    """A non-finite float, or a string that is not Unicode (an ASCII one, nearly all of them, needs no search)."""
    if isinstance(value, str):
        if value.isascii():
            return False
        try:
            value.encode("utf-8")  # 3 times as fast as searching it with a regex
        except UnicodeEncodeError:
            return True
        return False
    return isinstance(value, float) and not math.isfinite(value)


def _scan(value: Any, limit: int, *, strings: bool) -> tuple[bool, bool]:
    """(nests deeper than ``limit``, holds a value ``_odd`` refuses), in one pass without building field paths.

    Strings are checked only when ``strings`` (the text has a surrogate escape, as most files do not): on 16 MB
    of trajectory the regex over the text costs 10 ms, checking every non-ASCII string 30 ms.
    """
    if not isinstance(value, dict | list):
        return False, _odd(value)
    stack = [(value, 1)]
    odd = False
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True, odd
        if isinstance(node, dict):
            odd = odd or (strings and any(_odd(key) for key in node))
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1))
            elif child.__class__ is float and not math.isfinite(child) or strings and _odd(child):
                odd = True
    return False, odd


def _refusals(value: Any, where: str) -> Iterator[BadValue]:
    """Every value ``_odd`` refuses, with its field path, named as the importers name fields: ``steps[2].reward``."""
    if isinstance(value, str):
        if _odd(value):
            yield LoneSurrogate(where, value)
    elif isinstance(value, float):
        if _odd(value):
            yield NotFinite(where, value)
    elif isinstance(value, dict):
        for key, item in value.items():
            if _odd(key):  # named with the surrogate escaped: the message must be writable itself
                spelled = key.encode("utf-8", "backslashreplace").decode()
                yield LoneSurrogate(f"{where}.{spelled}" if where else spelled, key)
            yield from _refusals(item, f"{where}.{key}" if where else key)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _refusals(item, f"{where}[{i}]")


def _spelled(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    return f"{'' if value > 0 else '-'}Infinity (or a number too large for a float)"
