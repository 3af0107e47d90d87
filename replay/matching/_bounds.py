"""The limits a preference value states (``under $60``, ``4.5 stars or higher``, ``between $20 and $40``), and
whether a number of an applied text stays within them (``$54``, ``rated 4.6``).

A value's number is a bound when a comparison stands before it (``under``, ``below``, ``less than``,
``at most``, ``max``, ``up to``, ``<``; ``over``, ``above``, ``more than``, ``at least``, ``min``, ``>``),
after it (``+``, ``or more / higher / better``, ``and up``; ``or less / lower``, ``and under``), or it is one
end of a range (``between A and B``, ``A-B``, ``A to B``: both ends included, one number within it stands for
both). ``under`` / ``below`` / ``less than`` / ``over`` / ``above`` / ``more than`` exclude the limit itself,
the others include it. A number of a text meets a bound when it has the bound's unit (``$``, stars,
reviews...; stated or read from its context, never assumed) and is within the limit, and no comparison before
it points the other way (``over $50`` does not apply ``under $60``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from p2w_rt.replay.matching._tokens import TOKEN, stem, tokenize_normalized

_UPPER_BEFORE = re.compile(
    r"(?:\bunder|\bbelow|\bless than|\bfewer than|\bno more than|\bnot more than|\bat most|\bmax(?:imum)?|\bup to|"
    r"\bwithin|<=?)\s*$"
)
_LOWER_BEFORE = re.compile(r"(?:\bover|\babove|\bmore than|\bgreater than|\bat least|\bmin(?:imum)?|>=?)\s*$")
_STRICT = re.compile(r"(?:under|below|less than|fewer than|over|above|more than|greater than|<|>)\s*$")
_LOWER_AFTER = re.compile(
    r"^\s*(?:\+|(?:[a-z]+\s+)?(?:or (?:more|higher|above|over|better|greater)|and (?:up|above|over|higher)|plus)\b)"
)
_UPPER_AFTER = re.compile(r"^\s*(?:[a-z]+\s+)?(?:or (?:less|lower|under|below|fewer)|and (?:under|below|less))\b")
_RANGE_NEXT = re.compile(r"^\s*(?:[a-z]+\s+)?(?:-|to|and)\s*\$?\s*\d")
_BETWEEN = re.compile(r"\bbetween\s*$")

_TEXT_LOWER = frozenset(stem(w) for w in ("over", "above", "more", "greater", "least", "min", "minimum"))
_TEXT_UPPER = frozenset(stem(w) for w in ("under", "below", "less", "fewer", "max", "maximum", "most", "up"))
_NEGATIONS = frozenset({"no", "not"})
_MORE = stem("more")


@dataclass(frozen=True, slots=True)
class Bound:
    """A limit on a number with ``unit``: ``low`` / ``high`` (None: open), each strict or not."""

    unit: str
    low: float | None = None
    high: float | None = None
    strict: bool = False

    def holds(self, x: float) -> bool:
        if self.low is not None and (x < self.low or (self.strict and x == self.low)):
            return False
        return not (self.high is not None and (x > self.high or (self.strict and x == self.high)))

    def opposed_by(self, before: tuple[str, ...]) -> bool:
        """Whether the words (tokens) before a text's number state a comparison the other way (``no more than``
        is an upper limit)."""
        negated = any(w in _NEGATIONS for w in before)
        lower = any(w in _TEXT_LOWER for w in before) and not negated
        upper = any(w in _TEXT_UPPER for w in before) or (negated and _MORE in before)
        return (self.low is None and lower) or (self.high is None and upper)


def as_number(token: str) -> float:
    """A canonical number token as a float (``9:30`` -> 9.5)."""
    if ":" in token:
        hours, _, minutes = token.partition(":")
        return int(hours) + int(minutes) / 60
    return float(token)


def value_bounds(norm: str) -> dict[int, Bound]:
    """The bounds of a normalized value, by the index of their number among its tokens."""
    tokens = tokenize_normalized(norm)
    numbers = [(i, m) for i, m in enumerate(TOKEN.finditer(norm)) if m.group(2)]
    bounds: dict[int, Bound] = {}
    for k, (i, m) in enumerate(numbers):
        unit = (tokens.units[i] or "").lstrip("~")
        before, after = norm[max(0, m.start() - 24) : m.start()], norm[m.end() : m.end() + 24]
        x = as_number(tokens.words[i])
        if k + 1 < len(numbers) and (_RANGE_NEXT.match(after) or _BETWEEN.search(before)) and i not in bounds:
            j, _ = numbers[k + 1]
            unit = unit or (tokens.units[j] or "").lstrip("~")
            if unit:
                bounds[i] = bounds[j] = Bound(unit, low=x, high=as_number(tokens.words[j]))
            continue
        if not unit or i in bounds:
            continue
        strict = bool(_STRICT.search(before))
        if _UPPER_BEFORE.search(before) or _UPPER_AFTER.match(after):
            bounds[i] = Bound(unit, high=x, strict=strict)
        elif _LOWER_BEFORE.search(before) or _LOWER_AFTER.match(after):
            bounds[i] = Bound(unit, low=x, strict=strict)
    return bounds
