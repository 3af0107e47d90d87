"""A preference value compiled for matching (``compile_value``): its alternatives (``Intermediate or Advanced``),
each with the numbers and words a text must hold, how many of them, within what window, and the substring probes that
rule most texts out before any tokenizing. The matching itself is ``_values.py``'s; its docstring states the rules.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from p2w_rt.replay.matching._bounds import Bound, value_bounds
from p2w_rt.replay.matching._tokens import is_number, is_qualifier, is_stop, probe, tokenize

_OR = re.compile(r"\s+or\s+", re.IGNORECASE)

Anchor = tuple[str, str | None]
"""A number and its unit (or None)."""


@dataclass(frozen=True, slots=True)
class Alternative:
    text: str
    anchors: Counter[Anchor]
    words: Counter[str]
    need_anchors: int
    need_words: int
    width: int
    tokens: frozenset[str]
    anchor_probes: tuple[tuple[str | None, int], ...]
    word_probes: tuple[tuple[str | None, int], ...]
    """Substrings the normalized text must contain, with how many tokens each stands for (None: no literal)."""
    required_probe: str | None
    """The longest probe of a token every match needs (all anchors, or all words, are required), if any."""
    bounds: dict[Anchor, Bound]
    """The anchors the value states as limits (``under $60``): in applied texts a number within them counts."""
    unit_words: dict[Anchor, str]
    """The word of an anchor's unit (``4 people`` -> ``peopl``): a number implying that unit (``for 4``) stands for
    the word too; a stated unit is followed by its word anyway."""
    required_bounded: str | None
    """``required_probe`` when limits are compared: a bound's number need not be written."""

    @property
    def size(self) -> int:
        return sum(self.anchors.values()) + sum(self.words.values())


@dataclass(frozen=True, slots=True)
class ValuePattern:
    value: str
    alternatives: tuple[Alternative, ...]


def unit_of(unit: str | None) -> str | None:
    """A value's unit as stated or implied (``~``): a value asks for it either way."""
    return unit.lstrip("~") if unit else None


def _alternative(text: str) -> Alternative | None:
    tokens = tokenize(text)
    pairs = [(w, unit_of(u)) for w, u in zip(tokens.words, tokens.units, strict=True)]
    keys = [(w, u) for w, u in pairs if not is_stop(w)] or pairs
    if not keys:
        return None
    unit_words: dict[Anchor, str] = {
        (w, u): pairs[i + 1][0]
        for i, (w, u) in enumerate(pairs[:-1])
        if is_number(w) and u and not is_stop(pairs[i + 1][0]) and not is_number(pairs[i + 1][0])
    }
    bounds = {pairs[i]: bound for i, bound in value_bounds(tokens.text).items()}
    anchors: Counter[Anchor] = Counter((w, u) for w, u in keys if is_number(w))
    words = Counter(w for w, _ in keys if not is_number(w))
    n_anchors, n_words = sum(anchors.values()), sum(words.values())
    if n_anchors:
        need_anchors = n_anchors if n_anchors <= 3 else math.ceil(0.75 * n_anchors)
        need_words = math.ceil(0.5 * n_words)
    else:
        need_anchors = 0
        need_words = n_words if n_words <= 3 else math.ceil(0.75 * n_words)
    vocab = frozenset(w for w, _ in anchors) | frozenset(words)
    numbers = Counter(w for w, _ in keys if is_number(w))
    required = list(numbers) if n_anchors and need_anchors == n_anchors else []
    if need_words == n_words:
        required += list(words)
    required = [t for t in required if t not in unit_words.values()]
    literal = [p for p in map(probe, required) if p is not None]
    unbounded = {w for w, _ in bounds}
    literal_bounded = [p for p in map(probe, (t for t in required if t not in unbounded)) if p is not None]
    return Alternative(
        text,
        anchors,
        words,
        need_anchors,
        need_words,
        2 * (n_anchors + n_words) + 6,
        vocab,
        tuple((probe(w), n) for w, n in numbers.items()),
        tuple((None if w in unit_words.values() else probe(w), n) for w, n in words.items()),
        max(literal, key=len) if literal else None,
        bounds,
        unit_words,
        max(literal_bounded, key=len) if literal_bounded else None,
    )


def _split_alternatives(value: str) -> list[str]:
    if "," in value or ";" in value:
        return [value]
    parts = [p.strip() for p in _OR.split(value) if p.strip()]
    merged: list[str] = []
    for part in parts:
        keys = [t for t in tokenize(part).words if not is_stop(t)]
        if merged and all(is_qualifier(t) for t in keys):
            merged[-1] = f"{merged[-1]} or {part}"  # "4.5 stars or higher": one value, its bound
        elif keys:
            merged.append(part)
    return merged or [value]


@lru_cache(maxsize=4096)
def compile_value(value: str) -> ValuePattern:
    alternatives = [a for a in map(_alternative, _split_alternatives(value)) if a is not None]
    return ValuePattern(value, tuple(alternatives))


def compiled(value: str | ValuePattern) -> ValuePattern:
    """``value`` as a pattern: callers pass a value compiled once for many texts, or its text."""
    return value if isinstance(value, ValuePattern) else compile_value(value)
