"""WebArena's string and URL checks, re-implemented to give the same scores offline.

``must_include`` keeps WebArena's single-character token rule: a one-character reference
(``"0"``, ``"4"``) must be a whole token of the answer, so ``"40 items"`` does not include
``"4"``. WebArena tokenizes with NLTK's ``word_tokenize``; ``word_tokens`` reproduces what
matters for that rule (words and numbers whole, punctuation split off) without NLTK.
"""

from __future__ import annotations

import re
from collections import defaultdict
from urllib.parse import parse_qs, urlsplit

_WORD_TOKEN = re.compile(r"\w+(?:[.,']\w+)*|[^\w\s]")


def clean_answer(answer: str) -> str:
    answer = answer.strip()
    if len(answer) >= 2 and answer[0] == answer[-1] and answer[0] in "'\"":
        answer = answer[1:-1]
    return answer.lower()


def word_tokens(text: str) -> list[str]:
    return _WORD_TOKEN.findall(text)


def exact_match(ref: str, pred: str) -> float:
    return float(clean_answer(pred) == clean_answer(ref))


def must_include(ref: str, pred: str, *, tokenize: bool = False) -> float:
    clean_ref, clean_pred = clean_answer(ref), clean_answer(pred)
    if tokenize and len(clean_ref) == 1 and len(word_tokens(clean_ref)) == 1:
        return float(clean_ref in word_tokens(clean_pred))
    return float(clean_ref in clean_pred)


def _clean_url(url: str) -> str:
    return str(url).rstrip("/")


def _split_url(url: str) -> tuple[str, dict[str, list[str]]]:
    parts = urlsplit(url)
    return _clean_url(parts.netloc + parts.path), parse_qs(parts.query)


def url_match(reference_url: str, pred_url: str) -> tuple[float, str]:
    """WebArena's ``GOLD in PRED``: some reference base path is in the predicted one, and every reference
    query parameter has one of its reference values in the prediction. Returns (score, why)."""
    refs = [_clean_url(u) for u in reference_url.split(" |OR| ")]
    pred_base, pred_query = _split_url(_clean_url(pred_url))
    ref_bases: list[str] = []
    ref_query: dict[str, set[str]] = defaultdict(set)
    for ref in refs:
        base, query = _split_url(ref)
        ref_bases.append(base)
        for key, values in query.items():
            ref_query[key].update(values)
    if not any(base in pred_base for base in ref_bases):
        return 0.0, f"no reference path ({' | '.join(ref_bases)}) in {pred_base}"
    for key, values in ref_query.items():
        if not any(v in pred_query.get(key, []) for v in values):
            return 0.0, f"query parameter {key!r} is not one of {sorted(values)}"
    return 1.0, "reference URL matched"
