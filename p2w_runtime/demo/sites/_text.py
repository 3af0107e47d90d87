"""Word matching and seeded randomness shared by the demo sites' catalogs and search boxes."""

from __future__ import annotations

import random
import re
import zlib

_WORD = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")
STOPWORDS = frozenset(
    ("a", "an", "and", "at", "best", "by", "find", "for", "from", "i", "in", "is", "it", "me", "my", "of", "on")
    + ("or", "the", "to", "under", "with", "near", "top", "show")
)


def _stem(word: str) -> str:
    """Crude singular form, applied to both sides of a match so 'leggings' finds 'Legging'."""
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def tokens(text: str) -> set[str]:
    """Normalized content words of ``text`` (lowercase, possessives and plurals folded, stopwords dropped)."""
    return {_stem(w) for w in _WORD.findall(text.lower().replace("'s", "")) if w not in STOPWORDS}


def seeded(*key: object) -> random.Random:
    """A generator seeded from ``key`` with a stable hash (``hash()`` is salted per process)."""
    return random.Random(zlib.crc32("|".join(map(str, key)).encode()))
