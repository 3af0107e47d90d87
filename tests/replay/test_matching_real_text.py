"""The one value matcher of judges and classifiers (``replay.matching``) on the real AgentOccam run's text.

The judges search with ``TextSet.first`` and the classifiers with ``find_value``; both end in the same
``_match``, so a value found by one is found by the other on the same text (asserted here on every
retrieved text and action argument of the real folder).
"""

from __future__ import annotations

import json

import pytest

from p2w_rt.replay.classify import RulesClassifier
from p2w_rt.replay.matching import TextSet, find_value, number_mentions, tokenize
from tests.helpers.classify_builders import builder
from tests.helpers.paths import DATA

REAL = DATA / "runners-real" / "agentoccam" / "on-demand_gpt41"
MEDIUM = (
    "For 'my leggings size': the user's memories show purchase: Bought Stride Women's High-Rise Running "
    "Leggings in a medium, black, $54.00 on threads.p2w.test."
)


def _real_texts() -> list[str]:
    texts = []
    for path in sorted(REAL.rglob("*.json")):
        data = json.loads(path.read_text())
        texts += [m["Memory Retrieved"] for m in data["memory"]]
        texts += [s["action"] for s in data["trajectory"]] + [s["reason"] for s in data["trajectory"]]
    return texts


def test_the_real_memory_answer_is_read_in_the_file_as_written() -> None:
    answers = [m["Memory Retrieved"] for m in json.loads((REAL / "on_gpt41_Priya_Raman_A1.json").read_text())["memory"]]
    assert MEDIUM in answers


@pytest.mark.parametrize(
    ("value", "text"),
    [("size M", MEDIUM), ("size M", "a pair in medium"), ("size S", "in a small, navy"), ("size M", "size M"),
     ("Women's M", MEDIUM)],
)  # fmt: skip
def test_in_a_medium_states_size_m(value: str, text: str) -> None:
    match = find_value(value, text)
    assert match is not None and match.score == 1.0


def test_the_snippet_of_in_a_medium_is_the_original_text() -> None:
    match = find_value("size M", MEDIUM)
    assert match is not None and match.snippet == "in a medium"


@pytest.mark.parametrize(
    "text",
    ["a medium roast", "I'm in a hurry", "the M train", "in a large room", "medium, black leggings"],
)
def test_size_is_not_read_into_other_mediums(text: str) -> None:
    assert find_value("size M", text) is None


@pytest.mark.parametrize("value", ["size M", "under $60", "4.5 stars or higher", "Austin, TX 78701", "2 guests"])
def test_judges_and_classifiers_match_alike_on_the_real_text(value: str) -> None:
    texts = _real_texts()
    by_find = [i for i, text in enumerate(texts) if find_value(value, text) is not None]
    first = TextSet(texts).first(value)
    assert (first[0] if first else None) == (by_find[0] if by_find else None)


@pytest.mark.parametrize(
    ("text", "qualified"),
    [
        ("wireless headphones 8", []),
        ("wireless headphones 0", []),
        ("slim fit chinos under $40", ["40"]),
        ("chinos 34x30", ["34 30"]),
        ("trail running shoes size 10.5", ["10.5"]),
        ("women's 8 sneakers", ["8"]),
        ("4 stars and up", ["4"]),
        ("2 tickets for friday", ["2"]),
        ("under 60", ["60"]),
        ("headphones 2024", []),
    ],
)
def test_a_number_in_a_search_box_is_a_value_only_when_the_text_says_what_it_counts(
    text: str, qualified: list[str]
) -> None:
    assert [m.value for m in number_mentions(text) if m.qualified] == qualified


def test_bare_numbers_are_still_numbers_where_reasoning_attributes_them() -> None:
    assert [(m.value, m.qualified) for m in number_mentions("the user's usual size is 8")] == [("8", False)]
    assert tokenize("in a medium").words == ("siz", "a", "m")


def test_typed_query_variants_are_not_hallucinated_preferences() -> None:
    b = builder()
    for step, n in enumerate(("0", "2", "4", "6", "8"), start=1):
        b.observation(step, "http://search.p2w.test/", "Search")
        b.action(step, "type", "35", f"wireless headphones {n}", "1")
    found = {lab.label for lab in RulesClassifier().label(b.trajectory()).labels}
    assert "personalization_hallucination" not in found


def test_a_qualified_typed_number_still_needs_grounding() -> None:
    b = builder()
    b.observation(1, "http://search.p2w.test/", "Search")
    typed = b.action(1, "type", "35", "wireless headphones under $80", "1")
    labels = {lab.label: lab for lab in RulesClassifier().label(b.trajectory()).labels}
    assert labels["personalization_hallucination"].evidence.event_ids == [typed]
    assert labels["personalization_hallucination"].evidence.note == "ungrounded values: 80"


def test_no_texts_match_nothing_even_for_a_value_with_no_literal_probe() -> None:
    assert TextSet([]).first("size M") is None and TextSet([]).first("two") is None
