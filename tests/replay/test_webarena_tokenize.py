"""``must_include``'s tokenizer is NLTK's ``word_tokenize`` exactly, with no NLTK data download.

The reference path check writes the bundled English Punkt model as a ``punkt_tab`` directory,
points NLTK at it and calls NLTK's own public ``word_tokenize``: our function must give the same
tokens. The recorded outputs pin what NLTK 3.9+ answers for WebArena-shaped answers.
"""

from __future__ import annotations

from pathlib import Path

import nltk
import pytest
from punkt.data import english

from p2w_rt.replay.webarena import must_include, word_tokenize

ANSWERS = [
    "rated 4/5",
    "4-5 stars",
    "4:30",
    "It is 4.",
    "rated 4. Great product",
    "rated 4. stars given",
    "Mr. Smith bought 4. He paid $4.50 on Jan. 4, 2023.",
    'The answer is "4" (four)',
    "There are 0 reviews. 10 orders were canceled.",
    "e.g. 1 item, i.e. one; U.S. store no. 1",
    "don't count 1's, it's 1",
    "Yes. 2 of them: a, b.",
    "n/a",
]

RECORDED = {
    "rated 4/5": ["rated", "4/5"],
    "4-5 stars": ["4-5", "stars"],
    "4:30": ["4:30"],
    "It is 4.": ["It", "is", "4", "."],
    "rated 4. Great product": ["rated", "4", ".", "Great", "product"],
    "rated 4. stars given": ["rated", "4.", "stars", "given"],
    'The answer is "4" (four)': ["The", "answer", "is", "``", "4", "''", "(", "four", ")"],
    "There are 0 reviews. 10 orders were canceled.": [
        "There",
        "are",
        "0",
        "reviews",
        ".",
        "10",
        "orders",
        "were",
        "canceled",
        ".",
    ],  # fmt: skip
}


@pytest.fixture
def nltk_with_punkt_tab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """NLTK's own ``punkt_tab/english`` files, written from the bundled model, on NLTK's data path."""
    folder = tmp_path / "tokenizers" / "punkt_tab" / "english"
    folder.mkdir(parents=True)
    (folder / "collocations.tab").write_text("".join(f"{a}\t{b}\n" for a, b in sorted(english.COLLOCATIONS)))
    (folder / "sent_starters.txt").write_text("".join(f"{w}\n" for w in sorted(english.SENT_STARTERS)))
    (folder / "abbrev_types.txt").write_text("".join(f"{w}\n" for w in sorted(english.ABBREV_TYPES)))
    ortho = "".join(f"{w}\t{flags}\n" for w, flags in sorted(english.ORTHO_CONTEXT.items()))
    (folder / "ortho_context.tab").write_text(ortho)
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])
    nltk.tokenize._get_punkt_tokenizer.cache_clear()
    yield
    nltk.tokenize._get_punkt_tokenizer.cache_clear()


def test_same_tokens_as_nltks_own_word_tokenize(nltk_with_punkt_tab: None) -> None:
    for text in [*ANSWERS, *(a.lower() for a in ANSWERS)]:  # must_include tokenizes the cleaned, lowercased text
        assert word_tokenize(text) == nltk.word_tokenize(text), text


def test_recorded_nltk_outputs() -> None:
    for text, tokens in RECORDED.items():
        assert word_tokenize(text) == tokens, text


def test_nltk_alone_cannot_tokenize_here_which_is_why_the_model_is_bundled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nltk.data, "path", ["/nonexistent"])
    nltk.tokenize._get_punkt_tokenizer.cache_clear()
    try:
        with pytest.raises(LookupError, match="punkt_tab"):
            nltk.word_tokenize("rated 4/5")
        assert word_tokenize("rated 4/5") == ["rated", "4/5"]
    finally:
        nltk.tokenize._get_punkt_tokenizer.cache_clear()


@pytest.mark.parametrize(
    ("ref", "answer", "included"),
    [
        ("4", "rated 4/5", 0.0),
        ("4", "4-5 stars", 0.0),
        ("4", "4:30", 0.0),
        ("4", "It is 4.", 1.0),
        ("4", "It is 4. Great", 0.0),  # lowercased first: Punkt sees "4. great", no sentence end, token "4."
        ("4", "It is 4! Great", 1.0),
        ("4", "Total: 4.", 1.0),  # the text's last period is split off
        ("0", "There are 0 reviews.", 1.0),
        ("0", "There are 10 reviews.", 0.0),
        ("4", '"4"', 1.0),
        ("a", "plan a, b", 1.0),
    ],
)
def test_single_character_references_must_be_whole_tokens(ref: str, answer: str, included: float) -> None:
    assert must_include(ref, answer, tokenize=True) == included
    assert must_include(ref, answer, tokenize=False) == 1.0  # several references: plain substring
