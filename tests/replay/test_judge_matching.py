"""Value and site matching of the rules judges, against the real level-0 preference strings."""

from __future__ import annotations

import pytest

from p2w_rt.replay.matching import compile_value, find_value, mentions_site, on_site, site_hosts, tokenize
from p2w_runtime.data import load_tasks
from tests.helpers.paths import DATA

TASKS = DATA / "persona2web" / "tasks"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("32x32", "type [12] [slim fit chinos 32 x 32] [1]"),
        ("32x32", "https://www.kohls.com/search?size=32x32"),
        ("visible ratings 4.2+ stars with 50+ reviews", "Filter for 4.2+ stars with at least 50 reviews"),
        ("visible ratings 4.2+ stars with 50+ reviews", "prefers ratings of 4.2 stars or higher and over 50 reviews"),
        ("$70", "keep the budget under $70.00"),
        ("$70", "70"),
        ("Women's M", "women's leggings in size M"),
        ("Women's M", "womens medium leggings"),
        ("Intermediate or Advanced", "advanced level courses"),
        ("Good+ or better", "condition Good+"),
        ("at or below $25 USD", "max $25"),
        ("rating ≥4.6 and ≥1,000 reviews", "rating 4.6 or above with 1000 reviews"),
        ("9:30–11:00 pm", "between 9:30 and 11 pm"),
        ("Tomatometer over 80%", "tomatometer 80%+"),
        ("table for 4", "a table for four"),
        ("Fahrenheit", "temperatures in F"),
    ],
)
def test_value_found(value: str, text: str) -> None:
    assert find_value(value, text) is not None


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("32x32", "https://www.kohls.com/search?size=32x30"),
        ("visible ratings 4.2+ stars with 50+ reviews", "rated 4.2 stars"),
        ("visible ratings 4.2+ stars with 50+ reviews", "4.2 stars for 50 dollars"),
        ("$70", "70 reviews"),
        ("$70", "price $700"),
        ("$70", "I like 1970s music"),
        ("$5", "rated 5 stars"),
        ("Women's M", "women's leggings"),
        ("Good+ or better", "better price"),
        ("at or below $25 USD", "at the store"),
        ("Tomatometer over 80%", "tomatometer with 80 reviews"),
        ("evening or weekend appointments", "even so"),
    ],
)
def test_value_not_found(value: str, text: str) -> None:
    assert find_value(value, text) is None


def test_snippet_shows_the_original_text_with_its_sign() -> None:
    match = find_value("$70", "Set the max price to $70.00 please")
    assert match is not None and match.snippet == "$70.00" and match.score == 1.0
    partial = find_value("visible ratings 4.2+ stars with 50+ reviews", "Filter 4.2+ stars with 50+ reviews")
    assert partial is not None and partial.snippet == "4.2+ stars with 50+ reviews" and partial.score < 1.0


def test_a_long_text_does_not_match_by_scattering() -> None:
    scattered = "Women's section. " + "lorem ipsum " * 20 + "size M"
    assert find_value("Women's M", scattered) is None


def test_every_real_preference_compiles_and_matches_itself() -> None:
    tasks = [t for t in load_tasks(TASKS) if t.level == 0]
    values = [v for t in tasks for v in t.ground_truth.preferences]
    assert len(tasks) == 150 and len(values) > 300
    for value in values:
        assert compile_value(value).alternatives, value
        assert find_value(value, value) is not None, value
        assert find_value(value, f"The agent typed: {value.upper()} into the filter box") is not None, value


def test_tokens_keep_units_and_canonical_numbers() -> None:
    tokens = tokenize("$1,000.00 and 80% with 50+ reviews at 11:00")
    assert list(zip(tokens.words, tokens.units, strict=True)) == [
        ("1000", "$"),
        ("and", None),
        ("80", "%"),
        ("with", None),
        ("50", "review"),
        ("review", None),
        ("at", None),
        ("11", None),
    ]


def test_site_hosts_fix_the_benchmarks_typos_and_match_subdomains() -> None:
    assert site_hosts("coursera.org.com") == ("coursera.org.com", "coursera.org")
    assert site_hosts("https://www.Kohls.com/") == ("kohls.com",)
    assert on_site("https://www.coursera.org/learn/ml", site_hosts("coursera.org.com")) == "coursera.org"
    assert on_site("http://m.kohls.com/p/1", ("kohls.com",)) == "kohls.com"
    assert on_site("https://finance.yahoo.com/", site_hosts("sports.yahoo.com")) is None
    assert on_site("https://notkohls.com/", ("kohls.com",)) is None
    assert on_site("http://basket.p2w.test/", ("threads.p2w.test",)) is None


def test_site_mentions_by_host_and_by_name() -> None:
    by_host = mentions_site("web visit: www.kohls.com/mens", ("kohls.com",))
    assert by_host is not None and not by_host.by_name and by_host.snippet == "www.kohls.com"
    by_name = mentions_site("You usually shop at Kohl's.", ("kohls.com",))
    assert by_name is not None and by_name.by_name
    assert mentions_site("shop at notkohls.com", ("kohls.com",)) is None
    assert mentions_site("the aa battery", ("aa.com",)) is None
