"""Numbers written as words, read as digits before matching: "sixty" -> 60, "four and a half" -> 4.5.

User histories state preferences in words ("less than sixty dollars", "four and a half stars and up", "fifty
bucks", "a dozen eggs"); agents and sites write digits. Normalization rewrites the words on both sides, so the
matcher, its substring probes and its comparisons see one number. Only well-formed number phrases are read:
units, teens, tens (``sixty-eight``), ``hundred`` / ``thousand`` (with an optional ``and``), ``a`` or a number
before ``dozen`` / ``hundred``, ``half a dozen``, and a trailing ``and a half``.
"""

from __future__ import annotations

import re
from functools import cache

# fmt: off
_SMALL = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19,
}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
# fmt: on
_UNIT = "|".join(sorted((w for w, n in _SMALL.items() if 0 < n < 10), key=len, reverse=True))
_ANY_SMALL = "|".join(sorted(_SMALL, key=len, reverse=True))
_UNDER_100 = rf"(?:(?:{'|'.join(_TENS)})(?:[ -](?:{_UNIT}))?|{_ANY_SMALL})"
_UNDER_1000 = rf"(?:(?:{_UNDER_100}|a|an|one) hundred(?: (?:and )?{_UNDER_100})?|{_UNDER_100})"
_NUMBER = rf"(?:(?:{_UNDER_1000}|a|an|one) thousand(?: (?:and )?{_UNDER_1000})?|{_UNDER_1000})"


@cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(hint, phrase), compiled when the first text is read rather than at import: the phrase is the largest of the
    matching rules' patterns, and a command that reads no text (a pass finding every result cached) needs neither.
    The hint is a cheap test run first: most texts hold no number word at all."""
    hint = re.compile(rf"\b(?:{'|'.join(_SMALL)}|{'|'.join(_TENS)}|dozen|hundred|thousand)")
    phrase = re.compile(rf"\b(?:half a dozen|(?:{_UNDER_100} |an? )?dozen|{_NUMBER}(?: and a half)?)\b")
    return hint, phrase


def _value(phrase: str) -> float:
    if phrase == "half a dozen":
        return 6
    total = current = 0.0
    for word in phrase.replace("-", " ").split():
        if word in _SMALL:
            current += _SMALL[word]
        elif word in _TENS:
            current += _TENS[word]
        elif word in ("a", "an"):
            current = current or 1
        elif word == "hundred":
            current = (current or 1) * 100
        elif word == "thousand":
            total += (current or 1) * 1000
            current = 0
        elif word == "dozen":
            current = (current or 1) * 12
        elif word == "half":
            current += 0.5
    return total + current


def _digits(match: re.Match[str]) -> str:
    number = _value(match.group())
    return str(int(number)) if number == int(number) else f"{number:g}"


def spell_numbers(text: str) -> str:
    """``text`` (lower case) with its number phrases as digits."""
    hint, phrase = _patterns()
    if not hint.search(text):
        return text
    return phrase.sub(_digits, text)
