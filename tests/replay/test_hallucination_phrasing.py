"""Preference attribution without the word "user": phrasings from the Persona2Web runners' prompts
(``AgentOccam/.../memory_access.txt``, ``memory_instruction.txt``, Browser-Use's ``prompt_personalization.md``),
the real level-2 task queries ("my usual budget", "my regular city", "the usual size") and agent reasoning."""

from __future__ import annotations

import pytest

from p2w_rt.replay.classify import RulesClassifier
from p2w_rt.replay.classify._hallucination import attributed_constraints
from p2w_rt.replay.classify._texts import event_order
from p2w_rt.replay.derived import PassSettings
from tests.helpers.classify_builders import act_well, ask_well, builder

HALLUCINATION = "personalization_hallucination"

ATTRIBUTING = [
    # agent reasoning without the word "user"
    ("Apply the usual filters: 4.8+ stars and under $80.", {"4.8", "80"}),
    ("As usual, cap the price at $150.", {"150"}),
    ("Set the max price to $150 as usual.", {"150"}),
    ("Select my regular size 34x30.", {"34 30"}),
    ("Apply the typical rating filter of 4.7 stars.", {"4.7"}),
    ("Use my home airport DEN and my preferred seating in row 12.", {"DEN", "12"}),
    ("Like last time, book a table for 6 at 7 pm.", {"6", "7"}),
    ("Per their history, filter to Dockers.", {"Dockers"}),
    ("Based on past purchases, choose waist 36.", {"36"}),
    ("I usually shop at Macy's, so go there.", {"Macy's"}),
    # Browser-Use's personalization prompt: summaries start with "User" or "They"
    ("User frequently books at Olive Garden on Main Street.", {"Olive", "Garden", "Main", "Street"}),
    ("They prefer Italian cuisine.", {"Italian"}),
    ("User's usual coffee order is a Grande Caramel Macchiato.", {"Grande", "Caramel", "Macchiato"}),
    # AgentOccam's memory_access examples and the real task queries
    ("Search within my usual price range of $40-$60.", {"40", "60"}),
    ("The usual size here is 36x32.", {"36 32"}),
]
NOT_ATTRIBUTING = [
    "The regular price is $59.99 but it is on sale for $24.99.",
    "The standard model has 16GB RAM and costs $899.",
    "I need to click the search box at [12] and type Levi's.",
    "The page shows Dockers at 4.5 stars with 210 reviews.",
    "Click Nike in the brand filter to compare.",
    "As shown on the page, the Haggar pair costs $45.",
    "They have 3 colors available for the Haggar pair.",
    "Users often rate Haggar 4.8 stars.",
    "Customers frequently buy 2 packs.",
]


def _labels(reasoning: str) -> dict:
    b = builder()
    ask_well(b)
    b.planner(2, reasoning)
    act_well(b)
    verdict = RulesClassifier(PassSettings()).label(b.trajectory())
    return {label.label: label for label in verdict.labels}


@pytest.mark.parametrize(("reasoning", "values"), ATTRIBUTING)
def test_a_preference_phrased_without_user_is_attributed_and_must_be_grounded(reasoning: str, values: set) -> None:
    found = _labels(reasoning)
    assert HALLUCINATION in found, reasoning
    note = found[HALLUCINATION].evidence.note.removeprefix("ungrounded values: ")
    assert set(note.split(", ")) == values


@pytest.mark.parametrize("reasoning", NOT_ATTRIBUTING)
def test_product_facts_and_navigation_are_not_attributed(reasoning: str) -> None:
    b = builder()
    b.planner(2, reasoning)
    t = b.trajectory()
    assert list(attributed_constraints(t, event_order(t))) == []


@pytest.mark.parametrize(
    "reasoning",
    [
        "As usual, search for chinos in 32x32.",
        "Apply the typical rating filter: 4.2+ stars with 50+ reviews.",
        "Per their history, use size 32x32 at Kohl's.",
        "They prefer 32x32.",
        "Select my regular size 32x32.",
    ],
)
def test_the_same_phrasings_with_retrieved_values_are_grounded(reasoning: str) -> None:
    assert HALLUCINATION not in _labels(reasoning)


def test_an_adverbial_reads_its_whole_sentence_but_not_the_next_one() -> None:
    b = builder()
    b.planner(2, "Filter to 4.9 stars as usual. Then open Haggar at $45.")
    t = b.trajectory()
    found = list(attributed_constraints(t, event_order(t)))
    assert [c.value for c in found] == ["4.9"]
    assert found[0].shown == "Filter to 4.9 stars as usual"
