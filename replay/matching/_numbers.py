"""Numbers of a text as candidate preference values: what each one is, and whether the text says what it counts.

A number states a value when the text qualifies it: a currency sign, ``%`` / ``+``, a unit word after it
(``4 stars``, ``2 tickets``, ``8 oz``), a dimension (``34x30``), or a preference word right before it
(``size 10.5``, ``men's 10.5``, ``under 60``). A bare number typed into a search box (``wireless
headphones 8``) qualifies nothing: it is a query variant, not a size, a budget or a rating, so it is
not a preference the agent applied (issue 22: a real AgentOccam run typed ``... 0``, ``... 2``, ... ``... 8``).
Values found here are matched with ``find_value`` like every other value, by judges and classifiers alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from p2w_rt.replay.matching._tokens import UNIT_WORDS, stem, tokenize

_NUMBER = re.compile(
    r"(?<![\w.\-/])(?:[$€£]\s?)?\d+(?:[.,:]\d+)*(?:\s?[x×]\s?\d+(?:\.\d+)?)?(?:\s?(?:\+|%|stars?\b|reviews?\b))?"
)
_YEAR = re.compile(r"^(?:19|20)\d\d$")
_MARKED = re.compile(r"[$€£%+×x]|stars?\b|reviews?\b")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z'\u2019]*)\W*$")
_WORD_AFTER = re.compile(r"^\s*([A-Za-z]+)")
CUE_WORDS = frozenset({
    "size", "sz", "waist", "inseam", "width", "length", "under", "below", "over", "above", "max", "min",
    "than", "to", "rated", "rating", "budget", "price", "mens", "men's", "womens", "women's", "kids", "kid's",
    "us", "eu", "uk", "zip", "party",
})  # fmt: skip
"""Words right before a number that say what it is (``size 10.5``, ``under 60``, ``women's 8``)."""
_UNIT_STEMS = frozenset(stem(w) for w in UNIT_WORDS)


@dataclass(frozen=True, slots=True)
class NumberMention:
    value: str
    """The number tokens to match (``$150`` -> ``150``, ``32x32`` -> ``32 32``)."""
    shown: str
    qualified: bool
    """The text says what the number counts (unit, sign, dimension or a preference word before it)."""


def number_value(mention: str) -> str | None:
    """The number tokens of a mention; None for zeros and bare years (``2024``; ``$2024`` is a price)."""
    numbers = [w for w in tokenize(mention).words if w[0].isdigit() and w != "0"]
    if not numbers:
        return None
    if len(numbers) == 1 and _YEAR.match(numbers[0]) and not re.search(r"[$€£]", mention):
        return None
    return " ".join(numbers)


def _qualified(text: str, start: int, end: int, shown: str) -> bool:
    if _MARKED.search(shown):
        return True
    before = _WORD_BEFORE.search(text[max(0, start - 40) : start])
    if before and before.group(1).lower().replace("\u2019", "'") in CUE_WORDS:
        return True
    after = _WORD_AFTER.match(text[end : end + 40])
    return bool(after and stem(after.group(1).lower()) in _UNIT_STEMS)


def number_mentions(text: str) -> Iterator[NumberMention]:
    """Every number of ``text`` that could be a value, in text order."""
    for match in _NUMBER.finditer(text):
        value = number_value(match.group())
        if value is not None:
            shown = match.group().strip()
            yield NumberMention(value, shown, _qualified(text, match.start(), match.end(), match.group()))
