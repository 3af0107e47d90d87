"""WebArena's string and URL checks, written to give the same scores as ``evaluation_harness/evaluators.py``.

Every quirk is kept on purpose (each is pinned in ``docs/design/webarena-parity.md``): a lone quote
cleans to ``""``; ``string_match`` cleans the answer once before the checks and each check
cleans it again; a one-character ``must_include`` reference must be a whole NLTK token; URLs
lose a trailing ``/`` as a whole, never before ``?``, and base paths are compared by substring
after ``urlparse`` (which drops ``;params``).
"""

from __future__ import annotations

from collections import defaultdict
from urllib.parse import parse_qs, urlparse

from p2w_rt.replay.webarena._tokenize import word_tokenize


def clean_answer(answer: str) -> str:
    """``StringEvaluator.clean_answer``: strip, drop one pair of enclosing quotes, lowercase."""
    answer = answer.strip()
    if (answer.startswith("'") and answer.endswith("'")) or (answer.startswith('"') and answer.endswith('"')):
        answer = answer[1:-1]
    return answer.lower()


def exact_match(ref: str, pred: str) -> float:
    return float(clean_answer(pred) == clean_answer(ref))


def must_include(ref: str, pred: str, *, tokenize: bool = False) -> float:
    """With ``tokenize`` (a single-item ``must_include`` list), a one-character reference must be a whole
    token of the answer, so ``"4"`` is not in ``"rated 4/5"``; otherwise a plain substring test."""
    clean_ref, clean_pred = clean_answer(ref), clean_answer(pred)
    if tokenize and len(clean_ref) == 1 and len(word_tokenize(clean_ref)) == 1:
        return float(clean_ref in word_tokenize(clean_pred))
    return float(clean_ref in clean_pred)


def _clean_url(url: str) -> str:
    """WebArena's ``clean_url``: the trailing ``/`` of the whole URL, so ``…/a/?q=1`` keeps the one before ``?``."""
    return str(url).rstrip("/")


def _split_url(url: str) -> tuple[str, dict[str, list[str]]]:
    """``parse_url``: netloc + path as they are (no slash stripped) and the parsed query."""
    parts = urlparse(url)
    return parts.netloc + parts.path, parse_qs(parts.query)


def url_match(reference_url: str, pred_url: str) -> tuple[float, str]:
    """WebArena's ``GOLD in PRED``: some reference base path is a substring of the predicted one, and every
    reference query parameter has one of its reference values (pooled over the alternatives). A reference
    ``…/issues/?q=1`` keeps its slash, so a prediction ``…/issues?q=1`` does not contain it. Returns (score, why)."""
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
    for key, allowed in ref_query.items():
        if not any(v in pred_query.get(key, []) for v in allowed):
            return 0.0, f"query parameter {key!r} is not one of {sorted(allowed)}"
    return 1.0, "reference URL matched"
