"""Text normalization for value matching: the same function on both sides, so paraphrases meet.

Steps (documented with examples in docs/design/judges.md): Unicode NFKC + lower case; dashes,
curly quotes and comparison signs unified; possessive ``'s`` dropped; numbers canonical
(``1,000`` -> ``1000``, ``70.00`` -> ``70``, ``11:00`` -> ``11``); letters and digits split
(``32x32`` -> ``32 x 32``, ``1440p`` -> ``1440 p``); a light suffix stemmer; a few synonyms
(size words, number words; "in a medium" reads as "size m"). Each number keeps its unit when
the text gives one (``$70``, ``80%``, ``50 reviews``), so ``$5`` does not match ``5 stars``.
Stop words and comparison words (``under``, ``max``, ``at least``) never have to match: the bound is in the number, the
paraphrase varies.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice

from p2w_rt.replay.matching._spelled import spell_numbers

# fmt: off
_CHAR_MAP = str.maketrans({
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-",
    "\u2018": "'", "\u2019": "'", "\u02bc": "'", "\u201c": '"', "\u201d": '"',
    "\u2265": ">", "\u2264": "<", "\u00a0": " ",
})

STOP_WORDS = frozenset({
    "a", "an", "the", "and", "or", "of", "in", "on", "at", "to", "for", "with", "by", "from", "my", "our",
    "i", "me", "is", "are", "be", "that", "this", "it", "as", "per", "via",
    "under", "over", "below", "above", "max", "maximum", "min", "minimum", "least", "most", "up", "within",
    "than", "less", "more", "only", "budget", "limit", "cap", "price", "priced", "around", "about", "approx",
    "usd", "dollar", "dollars", "buck", "bucks", "percent", "higher", "lower", "greater", "fewer", "plus", "between",
    "better", "newer", "cheaper", "so",
})
"""Words that carry no value of their own: comparison words paraphrase freely (``under $20`` ~ ``max $20``),
currency and percent words live on as the unit of their number."""

QUALIFIER_WORDS = frozenset({
    "better", "higher", "greater", "more", "above", "newer", "cheaper", "lower", "less", "fewer", "so",
})
"""An ``or`` alternative made only of these widens its neighbour's bound (``Good+ or better``)."""

_SYNONYMS = {"small": "s", "medium": "m", "large": "l", "fahrenheit": "f", "celsius": "c"}

UNIT_WORDS = frozenset({
    "star", "review", "rating", "ratings", "reviewer", "minute", "min", "hour", "hr", "day", "week", "month",
    "year", "yr", "oz", "lb", "inch", "mile", "mi", "people", "person", "guest", "seat", "ticket", "night",
    "gb", "tb", "hz", "count", "ct", "pack", "pod", "player", "hire", "percent",
})
"""Words that say what a number counts (``50 reviews``); a number followed by one carries it as its unit."""
_CURRENCY_WORDS = frozenset({"usd", "dollar", "dollars", "buck", "bucks"})
_UNIT_ALIASES = {"rat": "star", "person": "peopl", "guest": "peopl", "diner": "peopl"}
"""One unit for words that count the same thing: a rating is in stars, a person is one of the people."""
# fmt: on

_CHAR_PAIRS = tuple((chr(k), v) for k, v in _CHAR_MAP.items())
"""The same map as pairs: a few ``in`` checks beat ``str.translate`` over long texts that rarely need it."""
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_POSSESSIVE = re.compile(r"'s\b")
_APOSTROPHE = re.compile(r"'")
TOKEN = re.compile(r"(\$ ?)?(\d+(?:\.\d+)?(?::\d\d)?)([ +]{0,2}%)?|([a-z]+)")
"""A number (with a ``$`` before or a ``%`` after it, kept in the span) or a word."""


_STEM_EXCEPTIONS = {"evening": "evening", "news": "news", "string": "string"}
"""Words the suffix rules would turn into another word (``evening`` -> ``even``)."""


def stem(word: str) -> str:
    """A deliberately light stemmer: plural ``s``, ``ing``, ``ed``, final ``e``, final ``y`` -> ``i``.

    ``ratings``/``rated``/``rate`` -> ``rat``; ``movies``/``movie`` -> ``movi``; ``boxes`` -> ``box``.
    """
    if word in _STEM_EXCEPTIONS:
        return _STEM_EXCEPTIONS[word]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    if len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
    elif len(word) > 4 and word.endswith("ed"):
        word = word[:-2]
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    if len(word) > 3 and word.endswith("y"):
        word = word[:-1] + "i"
    return word


_WORDS: dict[str, str] = {}
"""Cache of ``canonical_word``: texts repeat their words, and a dict lookup is the cheapest cache."""
_MAX_WORDS = 200_000


def canonical_word(word: str) -> str:
    """A lower-case word as a token: synonym, then stem."""
    token = stem(_SYNONYMS.get(word, word))
    token = _SYNONYMS.get(token, token)
    if len(_WORDS) < _MAX_WORDS:
        _WORDS[word] = token
    return token


_SIZE_WORDS = frozenset({"small", "medium", "large"})
SIZE_TOKEN = "siz"
"""The token of ``size``: "in a medium" states the size as plainly as "size M" does, so the ``in`` of
"in (a) small / medium / large" becomes this token (one token each way, so snippet offsets hold)."""

SYNONYM_TOKENS = frozenset(_SYNONYMS.values()) | {SIZE_TOKEN}
"""Tokens a text can produce without containing them literally (``four`` -> ``4``, "in a medium" -> ``siz m``)."""

_UNIT_STEMS = frozenset(stem(w) for w in UNIT_WORDS)
_STOP_STEMS = frozenset(stem(w) for w in STOP_WORDS)
_QUALIFIER_STEMS = frozenset(stem(w) for w in QUALIFIER_WORDS)


def _number(token: str) -> str:
    if ":" in token:
        hours, _, minutes = token.partition(":")
        return str(int(hours)) if minutes == "00" else f"{int(hours)}:{minutes}"
    if "." in token:
        whole, _, frac = token.partition(".")
        frac = frac.rstrip("0")
        return f"{int(whole)}.{frac}" if frac else str(int(whole))
    return str(int(token))


@dataclass(frozen=True, slots=True)
class Tokens:
    """Normalized tokens of a text and their units (numbers only); ``text`` is the normalized text."""

    text: str
    words: tuple[str, ...]
    units: tuple[str | None, ...]
    vocab: frozenset[str]

    def snippet(self, first: int, last: int, original: str) -> str:
        """The text covering tokens ``first..last`` (a number with its ``$`` / ``%``), from ``original`` when
        normalization kept offsets. Spans are found again here: only matches need them."""
        spans = [m.span() for m in islice(TOKEN.finditer(self.text), last + 1)]
        start, end = spans[first][0], spans[last][1]
        source = original if len(original) == len(self.text) else self.text
        return source[start:end]


@lru_cache(maxsize=65536)
def normalize(text: str) -> str:
    """NFKC, unified punctuation, lower case, canonical thousands, no apostrophes (each step only when needed)."""
    return normalize_uncached(text)


def normalize_uncached(text: str) -> str:
    """``normalize`` without the cache, for one-off blocks of many texts (every step is local to a character)."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
        for char, replacement in _CHAR_PAIRS:
            if char in text:
                text = text.replace(char, replacement)
    text = spell_numbers(text.lower())
    if "," in text:
        text = _THOUSANDS.sub("", text)
    if "'" in text:
        text = _APOSTROPHE.sub(" ", _POSSESSIVE.sub("  ", text))
    return text


def _unit_word(word: str | None) -> str | None:
    if word is None:
        return None
    if word in _CURRENCY_WORDS:
        return "$"
    unit = stem(word)
    if unit in _UNIT_STEMS:
        return "%" if unit == "percent" else _UNIT_ALIASES.get(unit, unit)
    return None


def tokenize(text: str) -> Tokens:
    """Every token of ``text`` (stop words included: they count for window widths, not for matches).

    A number's unit is ``$`` before it, ``%`` right after it, or a unit word as the next token.
    """
    return tokenize_normalized(normalize(text))


@lru_cache(maxsize=65536)
def tokenize_normalized(norm: str) -> Tokens:
    """``tokenize`` of a text already passed through ``normalize``."""
    parts = TOKEN.findall(norm)
    words: list[str] = []
    units: list[str | None] = []
    for i, (dollar, number, percent, word) in enumerate(parts):
        if number:
            words.append(_number(number))
            if dollar:
                units.append("$")
            elif percent:
                units.append("%")
            else:
                following = parts[i + 1][3] if i + 1 < len(parts) else None
                units.append(_unit_word(following or None))
        else:
            if word in _SIZE_WORDS:
                _size_after_in(parts, words, i)
            words.append(_WORDS.get(word) or canonical_word(word))
            units.append(None)
    _units_from_context(words, units)
    return Tokens(norm, tuple(words), tuple(units), frozenset(words))


def _units_from_context(words: list[str], units: list[str | None]) -> None:
    """Units a number's neighbours imply, marked ``~``: ``for 4`` / ``party of 4`` people, ``rated 4.6`` /
    ``4.6 out of 5`` stars, ``34x30`` a size (``x`` then reads as ``and``). A ``~`` unit is met only by the same
    unit; against any other value it stands as no unit, as before."""
    for i, word in enumerate(words):
        if not word[0].isdigit() or units[i] is not None:
            continue
        before, after = words[max(0, i - 2) : i], words[i + 1 : i + 4]
        if after[:1] == ["x"] and len(after) > 1 and after[1][0].isdigit():
            words[i + 1] = "and"
            units[i] = units[i + 2] = "~siz"
        elif before[-1:] == ["for"] or before == ["parti", "of"]:
            units[i] = "~peopl"
        elif before[-1:] == ["rat"] or after == ["out", "of", "5"]:
            units[i] = "~star"


def _size_after_in(parts: list[tuple[str, str, str, str]], words: list[str], i: int) -> None:
    """``in (a|an) medium``: the ``in`` token says ``size`` (parts and words share indices)."""
    j = i - 1
    if j >= 0 and parts[j][3] in ("a", "an"):
        j -= 1
    if j >= 0 and parts[j][3] == "in":
        words[j] = SIZE_TOKEN


def probe(token: str) -> str | None:
    """A substring every normalized text producing ``token`` contains, or None when there is none.

    Stems are prefixes of their words except for a final ``y`` -> ``i``; synonyms have no literal form.
    """
    if token in SYNONYM_TOKENS:
        return None
    return token[:-1] if token.endswith("i") and not token[0].isdigit() else token


def is_number(token: str) -> bool:
    return token[0].isdigit()


def is_stop(token: str) -> bool:
    return token in _STOP_STEMS


def is_qualifier(token: str) -> bool:
    return token in _QUALIFIER_STEMS


def key_tokens(text: str) -> tuple[str, ...]:
    """The tokens of a value that must be found: everything but stop words."""
    return tuple(t for t in tokenize(text).words if t not in _STOP_STEMS)
