"""Intent's wrong item by the query's superlative: the chosen result must be the best-rated / cheapest / soonest of
the results listed on the page it was chosen from (built episodes with AX trees as blobs; recorded ones in
test_intent_recorded.py)."""

from __future__ import annotations

import json

import pytest

from p2w_rt.replay.derived import PassSettings
from p2w_rt.replay.judges import JudgeContext, Scorecard
from p2w_rt.replay.persona2web import (
    ActionWiseRulesJudge,
    OutcomeBasedRulesJudge,
    RubricRulesJudge,
    SiteSettings,
    goal_of,
)
from p2w_rt.schemas import GroundTruth, uuid7
from p2w_runtime.domain.trajectory import load_trajectory
from p2w_runtime.store import EventStore
from p2w_runtime.testing.episodes import EpisodeBuilder
from tests.helpers.builders import run_started
from tests.helpers.paths import DATA


@pytest.fixture
def store(memory_store: EventStore) -> EventStore:
    """These tests need a store, not SQL: the in-memory one (docs/design/store.md, "The memory store")."""
    return memory_store


SHOP = GroundTruth(website="shop.p2w.test", websites=["shop.p2w.test"], preferences=["under $100"])
SETTINGS = PassSettings(plugins=(SiteSettings(location_sites=()),))
TASKS = DATA / "persona2web" / "tasks"


@pytest.mark.parametrize(
    ("query", "measure"),
    [
        ("Find wireless earbuds ..., and add the best-rated one to the cart.", "rating"),
        ("Find men's trail running shoes ..., and add the best-reviewed pair to the cart.", "rating"),
        ("Add the highest rated blender to my cart", "rating"),
        ("Pick 2 tickets for the soonest one and go to checkout without buying.", "date"),
        ("Add the cheapest oat milk to the cart", "price"),
        ("Add the lowest-priced kettle to my basket", "price"),
        ("Find men's slim chinos ..., and add the top match to the cart.", None),
        ("find women's tops ..., then add the best match to my cart.", None),
        ("Search for new-with-tags sneakers from top-rated sellers ... and add one to the cart", None),
        ("Find a flight ... on the first Friday next month, sorted by lowest price.", None),
    ],
)
def test_the_superlative_is_read_from_the_query(query: str, measure: str | None) -> None:
    best = goal_of(query).best
    assert (best.measure if best else None) == measure


def test_of_the_real_cart_tasks_only_the_best_reviewed_ones_name_a_measure() -> None:
    """Of the 450 vendored Persona2Web tasks, 75 are cart goals; they ask for "the top / best match" (no measure)
    except Rowan_Jones_A1-3's "best-reviewed in-stock option". Information goals (375) are never checked."""
    named = {}
    for f in sorted(TASKS.rglob("*.json")):
        goal = goal_of(json.loads(f.read_text())["intent"])
        if goal.kind == "cart":
            named[f.stem] = goal.best.phrase if goal.best else None
    assert len(named) == 75
    assert {k: v for k, v in named.items() if v} == {f"Rowan_Jones_A{n}": "best-reviewed" for n in (1, 2, 3)}


RESULTS = """[1] heading "Search results" [level=1]
[2] combobox "Sort by"
  option "Price: low to high"
  option "Customer rating"
[3] status: 3 results
[10] link "Aria Earbuds"
  /url: /product/a
text: $89.00 · 4.5 out of 5 stars (2,043 reviews)
[11] link "Bolt Earbuds"
  /url: /product/b
text: $64.99 · 4.4 out of 5 stars (50 reviews)
[12] link "Crest Earbuds"
  /url: /product/c
text: $150.00 · 4.9 out of 5 stars (96 reviews)
"""
PRODUCT = b'[20] heading "{name}" [level=1]\n[21] button "Add to cart"\n'
CART = b'[30] heading "Your cart" [level=1]\n[31] link "Earbuds"\n  /url: /product/x\ntext: Qty 1 \xc2\xb7 $64.99\n'


async def judge(store, b: EpisodeBuilder, judge_type: type = RubricRulesJudge) -> Scorecard:
    run_id = b.stream.split("/")[0]
    await store.append([run_started(run_id, f"built-{run_id}")])
    await store.append(b.events, b.blobs)
    t = await load_trajectory(store, b.stream)
    return await judge_type(SETTINGS).judge(t, JudgeContext(get_blob=store.get_blob))


def chosen(
    link: str, query: str, results: str = RESULTS, *, opened_by: str = "click", truth: GroundTruth = SHOP
) -> EpisodeBuilder:
    """Results listed at step 1, the result behind ``[link]`` opened and added at step 2, the cart at step 3."""
    b = EpisodeBuilder(uuid7(), "Ann_Lee_C3", query=query, ground_truth=truth, start_url="http://search.p2w.test/")
    b.observation(1, "http://shop.p2w.test/search?q=earbuds", "Search results | Shop", ax_tree=results.encode())
    path = next(line.split("/url: ")[1] for line in results.split(f"[{link}] link")[1].splitlines()[1:2])
    if opened_by == "click":
        b.action(1, "click", link)
    else:
        b.action(1, "goto", f"http://shop.p2w.test{path}")
    b.observation(2, f"http://shop.p2w.test{path}", "Earbuds | Shop", ax_tree=PRODUCT.replace(b"{name}", b"Earbuds"))
    b.action(2, "click", "21")
    b.observation(3, "http://shop.p2w.test/cart", "Your cart | Shop", ax_tree=CART)
    b.action(3, "stop", "Added")
    b.finish("answered", "Added", steps=3)
    return b


BEST_RATED = "Find earbuds under $100 and add the best-rated one to the cart"


async def test_the_best_rated_result_within_the_budget_is_10(store) -> None:
    """Crest is rated higher but costs $150: the task's "under $100" rules it out of the comparison."""
    verdict = await judge(store, chosen("10", BEST_RATED))
    note = verdict.evidence["intent"].note
    assert verdict.points["intent"] == 10.0
    assert "'best-rated': 'Aria Earbuds' rated 4.5 is the best of 2 listed on the results page of step 1" in note


async def test_a_lower_rated_result_is_a_wrong_item(store) -> None:
    verdict = await judge(store, chosen("11", BEST_RATED))
    note = verdict.evidence["intent"].note
    assert verdict.points["intent"] == 0.0
    assert note.startswith(
        "cart goal; wrong item: 'Bolt Earbuds' rated 4.4 chosen, 'Aria Earbuds' rated 4.5 listed on the results page"
        ' of step 1; the task asks for the best-rated; decided from click on [21] button "Add to cart"'
    )


async def test_a_result_opened_by_its_url_is_checked_too(store) -> None:
    verdict = await judge(store, chosen("11", BEST_RATED, opened_by="goto"))
    assert verdict.points["intent"] == 0.0 and "wrong item: 'Bolt Earbuds'" in verdict.evidence["intent"].note


async def test_the_cheapest_is_compared_by_price(store) -> None:
    query = "Find earbuds and add the cheapest one to the cart"
    assert (await judge(store, chosen("11", query))).points["intent"] == 10.0
    wrong = await judge(store, chosen("10", query))
    assert wrong.points["intent"] == 0.0
    assert "'Aria Earbuds' at $89.00 chosen, 'Bolt Earbuds' at $64.99 listed" in wrong.evidence["intent"].note


async def test_a_listing_without_the_measure_does_not_penalize(store) -> None:
    bare = "\n".join(line for line in RESULTS.splitlines() if not line.startswith("text:"))
    verdict = await judge(store, chosen("11", BEST_RATED, bare))
    note = verdict.evidence["intent"].note
    assert verdict.points["intent"] == 10.0
    assert "'best-rated' not checked: the results page of step 1 states no such measure for it ('Bolt Earbuds')" in note


async def test_a_query_without_a_superlative_takes_any_result(store) -> None:
    verdict = await judge(store, chosen("11", "Find earbuds under $100 and add the top match to the cart"))
    assert verdict.points["intent"] == 10.0 and "best" not in verdict.evidence["intent"].note


async def test_the_soonest_event_is_compared_by_date(store) -> None:
    events = """[3] status: 2 events
[10] link "Late Show"
  /url: /event/e1
text: Comedy · Hall, Denver · Sat Dec 12, 2026 at 20:00 · from $35.00
[11] link "Early Show"
  /url: /event/e2
text: Comedy · Hall, Denver · Fri Dec 04, 2026 at 19:00 · from $30.00
"""
    query = "Find comedy shows in Denver and add a ticket for the soonest one to the cart"
    verdict = await judge(store, chosen("10", query, events))
    assert verdict.points["intent"] == 0.0
    assert "'Late Show' on 2026-12-12 20:00 chosen, 'Early Show' on 2026-12-04 19:00" in verdict.evidence["intent"].note


async def test_the_baselines_check_the_choice_only_when_their_view_shows_it(store) -> None:
    b = chosen("11", BEST_RATED)
    await store.append([run_started(b.stream.split("/")[0], "built")])
    await store.append(b.events, b.blobs)
    t = await load_trajectory(store, b.stream)
    ctx = JudgeContext(get_blob=store.get_blob)
    assert (await ActionWiseRulesJudge(SETTINGS).judge(t, ctx)).points["intent"] == 0.0
    outcome = await OutcomeBasedRulesJudge(SETTINGS).judge(t, ctx)
    assert outcome.points["intent"] == 10.0
    assert (
        "'best-rated' not checked: the page of the decisive action is not in this view"
        in outcome.evidence["intent"].note
    )


async def test_an_imported_run_without_pages_says_the_choice_was_not_checked(store) -> None:
    b = EpisodeBuilder(uuid7(), "Ann_Lee_C3", query=BEST_RATED, ground_truth=SHOP, start_url="http://search.p2w.test/")
    b.observation(1, "http://shop.p2w.test/search?q=earbuds", "Search results | Shop")
    b.action(1, "click", "11")
    b.observation(2, "http://shop.p2w.test/product/b", "Bolt Earbuds | Shop")
    b.planner(2, "Add the Bolt earbuds to the cart.")
    b.action(2, "click", "21")
    b.observation(3, "http://shop.p2w.test/cart", "Your cart | Shop")
    b.action(3, "stop", "Added")
    b.finish("answered", "Added", steps=3)
    verdict = await judge(store, b)
    assert verdict.points["intent"] == 10.0
    assert "'best-rated' not checked: no page content recorded" in verdict.evidence["intent"].note


async def test_a_result_listed_without_the_size_asked_for_is_no_rival(store) -> None:
    """Threads lists the sizes of each result: a higher-rated jacket not made in the task's size M is not the one."""
    sized = RESULTS.replace("(2,043 reviews)", "(2,043 reviews) · Sizes: XS, S").replace(
        "(50 reviews)", "(50 reviews) · Sizes: S, M, L"
    )
    truth = GroundTruth(website="shop.p2w.test", websites=["shop.p2w.test"], preferences=["under $100", "size M"])
    verdict = await judge(store, chosen("11", BEST_RATED, sized, truth=truth))
    assert verdict.points["intent"] == 10.0, verdict.evidence["intent"].note
    note = verdict.evidence["intent"].note
    assert "'best-rated' not checked: the results page of step 1 lists no other result with it that the task" in note
    unsized = await judge(store, chosen("11", BEST_RATED, sized))
    assert unsized.points["intent"] == 0.0, "without a size preference the XS / S result is a rival"
