"""Numbers as the value matcher reads them (issue 41): written as words, compared against limits, with their units.

One matcher serves judges (``TextSet.first``) and classifiers (``find_value``); ``bounded`` marks a text the agent
applied, where a number within the limit a value states meets it.
"""

from __future__ import annotations

import pytest

from p2w_rt.replay.matching import TextSet, find_value, normalize


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("I never spend more than sixty dollars", "i never spend more than 60 dollars"),
        ("four and a half stars and up", "4.5 stars and up"),
        ("Sixty-eight dollars is too much", "68 dollars is too much"),
        ("a dozen eggs, half a dozen bagels, two dozen rolls", "12 eggs, 6 bagels, 24 rolls"),
        ("one hundred and fifty reviews", "150 reviews"),
        ("at most fifty bucks", "at most 50 bucks"),
        ("often someone tones it down", "often someone tones it down"),
    ],
)
def test_numbers_in_words_become_digits(text: str, normalized: str) -> None:
    assert normalize(text) == normalized


@pytest.mark.parametrize(
    ("value", "text"),
    [
        # the real Priya_Raman_A1 history entries (tests/data/runners-real)
        ("under $60", "best running leggings for long runs that cost less than sixty dollars"),
        ("4.5 stars or higher", "Threads - Women's activewear filtered by rating: four and a half stars and up"),
        ("below $50", "I spend at most fifty bucks on work pants"),
        ("a dozen eggs", "12 eggs"),
        ("4 people", "a table for 4"),  # "for 4": people
        ("4 people", "party of four"),
        ("2 guests", "for 2 people"),  # a guest is one of the people
        ("34x30", "waist 34, inseam 30"),  # a size, however it is spelled
        ("34x30", "W34 L30"),
    ],
)
def test_written_values_are_read(value: str, text: str) -> None:
    assert find_value(value, text) is not None


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("34x30", "$34, 30 reviews"),  # a price and a count are no size
        ("4 stars and up", "size 4"),
        ("4 people", "4 stars"),
    ],
)
def test_units_keep_numbers_apart(value: str, text: str) -> None:
    assert find_value(value, text) is None


CHOICE = "Added Stride Women's High-Rise Running Leggings, 4.6 stars, $54.00"


@pytest.mark.parametrize(
    ("value", "text", "snippet"),
    [
        ("under $60", CHOICE, "$54.00"),
        ("4.5 stars or higher", CHOICE, "4.6 stars"),
        ("at least 4 stars", "rated 4.6", "4.6"),
        ("4.5 stars or higher", "4.7 out of 5", "4.7"),
        ("at most $25", "$19.99 paperback", "$19.99"),
        ("over 1000 reviews", "1,250 reviews", "1250 reviews"),
        ("between $20 and $40", "a $30 bottle", "$30"),
        ("27-34 inch", "a 32 inch monitor", "32 inch"),
        ("rating ≥4.6 and ≥1,000 reviews", "4.8 stars from 2,400 reviews", "4.8 stars from 2400 reviews"),
    ],
)
def test_a_number_within_the_limit_applies_it(value: str, text: str, snippet: str) -> None:
    match = find_value(value, text, bounded=True)
    assert match is not None and match.snippet == snippet
    assert find_value(value, text) is None, "retrieval reads the limit as stated, not a number under it"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("under $60", "$64.99"),
        ("under $60", "over $50"),  # the text's own comparison points the other way
        ("at least 4 stars", "no more than 4.5 stars"),
        ("4.5 stars or higher", "4.4 out of 5"),
        ("under $60", "4.6 stars"),  # another unit
        ("under $60", "54 reviews"),
        ("under $60", "54"),  # a bare number is not assumed to be a price
        ("between $20 and $40", "$45"),
    ],
)
def test_a_number_outside_the_limit_or_in_another_unit_does_not(value: str, text: str) -> None:
    assert find_value(value, text, bounded=True) is None


def test_the_limit_itself_is_the_value_stated() -> None:
    """``under`` excludes 60 from the numbers within it, but "$60" states the value itself (a filter ``max=60``)."""
    assert find_value("under $60", "$60.00", bounded=True) is not None
    assert find_value("over $60", "$60.00 or more", bounded=True) is not None
    assert find_value("under $60", "$59.99", bounded=True) is not None


def test_judges_and_classifiers_read_limits_alike() -> None:
    texts = TextSet(["search leggings", CHOICE, "I choose the 4.6-star pair for $54"])
    judged = texts.first("under $60", bounded=True)
    assert judged is not None and judged[0] == 1
    classified = find_value("under $60", CHOICE, bounded=True)
    assert classified is not None and judged[1] == classified
    assert texts.first("under $60") is None
