"""Intent's goal kinds read from queries, and the rubric's 10 / 5 / 0 on built episodes (AX trees as blobs in a
store) and on imported runner files (URLs, action text and reasoning only). Recorded ones: test_intent_recorded.py.
"""

from __future__ import annotations

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
from p2w_runtime.testing.episodes import EpisodeBuilder
from tests.helpers.builders import run_started

SHOP = GroundTruth(website="shop.p2w.test", websites=["shop.p2w.test"], preferences=["size M", "under $60"])
SETTINGS = PassSettings(plugins=(SiteSettings(location_sites=()),))


@pytest.mark.parametrize(
    ("query", "kind", "quantity", "time"),
    [
        ("Query: Find penne ... and add two boxes to the cart.", "cart", 2, None),
        ("At amazon.com, find almond milk ..., then add one to cart. (San Jose, CA 95101)", "cart", 1, None),
        ("Add milk that's safe for **lactose intolerant** to cart, excluding **vanilla**", "cart", None, None),
        (
            "Find a table for **4 people** ... Saturday at 7:00 PM, and open the reservation details page without "
            "confirming.",
            "reservation",
            None,
            "19:00",
        ),  # fmt: skip
        ("At tablefor.p2w.test, book Sunday brunch at 11:00 AM for **6 people**", "reservation", None, "11:00"),
        ("Find **jazz** concerts ..., choose **2 tickets** and go to checkout without buying.", "checkout", 2, None),
        (
            "At united.com, find nonstop roundtrip flights from **DFW** ... on that airline; do not book.",
            "information",
            None,
            None,
        ),  # fmt: skip
        ("At delta.com, show me a round-trip option ...; no reservations required.", "information", None, None),
        (
            "At opentable.com, check availability for a table at **Xochi** during **9:30–11:00 pm**.",
            "information",
            None,
            None,
        ),  # fmt: skip
        ("At kohls.com, find men's slim-fit chinos in **32x32**", "information", None, None),
    ],
)
def test_the_goal_is_read_from_the_query(query: str, kind: str, quantity: int | None, time: str | None) -> None:
    goal = goal_of(query)
    assert (goal.kind, goal.quantity, goal.time) == (kind, quantity, time)


# -- built episodes: observations with AX trees, judged from a real store ------------------------------------

PRODUCT = b"""[1] generic [active]
  [2] link "Cart (0)"
    /url: /cart
  [3] heading "Trail Leggings" [level=1]
  [4] strong: $48.00
  [5] combobox "Size"
    option "S"
    option "M" [selected]
  [6] button "Add to cart"
"""
CART_PAGE = b"""[7] heading "Your cart" [level=1]
[8] link "Trail Leggings"
  /url: /product/p1
text: \xc2\xb7 Size M \xc2\xb7 Qty 1 \xc2\xb7 $48.00
[9] link "Proceed to checkout"
  /url: /checkout
"""


async def judge(store, b: EpisodeBuilder, judge_type: type = RubricRulesJudge) -> Scorecard:
    run_id = b.stream.split("/")[0]
    await store.append([run_started(run_id, f"built-{run_id}")])
    await store.append(b.events, b.blobs)
    t = await load_trajectory(store, b.stream)
    return await judge_type(SETTINGS).judge(t, JudgeContext(get_blob=store.get_blob))


def shop_episode(query: str = "Find leggings in size M under $60 and add the best one to the cart") -> EpisodeBuilder:
    b = EpisodeBuilder(uuid7(), "Ann_Lee_A3", query=query, ground_truth=SHOP, start_url="http://search.p2w.test/")
    b.observation(1, "http://shop.p2w.test/product/p1", "Trail Leggings | Shop", ax_tree=PRODUCT)
    b.planner(1, "These leggings fit; put them in the cart.")
    b.action(1, "click", "6")
    return b


async def test_out_of_stock_after_add_to_cart_is_5(store) -> None:
    b = shop_episode()
    b.observation(
        2, "http://shop.p2w.test/product/p1", "Trail Leggings | Shop", ax_tree=b"[10] alert: Sorry, out of stock"
    )
    b.action(2, "stop", "Out of stock")
    b.finish("answered", "Out of stock", steps=2)
    verdict = await judge(store, b)
    assert verdict.points["intent"] == 5.0
    assert 'click on [6] button "Add to cart"' in verdict.evidence["intent"].note
    assert "the next page says 'out of stock'" in verdict.evidence["intent"].note


async def test_captcha_after_add_to_cart_is_5_and_before_it_0(store) -> None:
    b = shop_episode()
    b.observation(2, "http://shop.p2w.test/blocked", "Verify you are human", ax_tree=b'[10] heading "Verify"')
    b.finish("blocked", detail="CAPTCHA marker 'verify you are human' in the page text", steps=1)
    verdict = await judge(store, b)
    assert verdict.points["intent"] == 5.0 and "CAPTCHA" in verdict.evidence["intent"].note
    early = EpisodeBuilder(uuid7(), "Ann_Lee_A3", query="Add leggings to the cart", ground_truth=SHOP)
    early.observation(1, "http://shop.p2w.test/blocked", "Verify you are human", ax_tree=b'[1] heading "Verify"')
    early.finish("blocked", detail="CAPTCHA marker 'verify you are human' in the page text", steps=0)
    assert (await judge(store, early)).points["intent"] == 0.0, "blocked before any decisive action"


async def test_add_to_cart_without_a_cart_page_counts_by_the_cart_count(store) -> None:
    b = shop_episode()
    b.observation(
        2, "http://shop.p2w.test/product/p1", "Trail Leggings | Shop", ax_tree=PRODUCT.replace(b"(0)", b"(1)")
    )
    b.action(2, "stop", "Added")
    b.finish("answered", "Added", steps=2)
    verdict = await judge(store, b)
    assert verdict.points["intent"] == 10.0 and "showing 'Cart (1)'" in verdict.evidence["intent"].note


async def test_an_empty_cart_page_is_not_the_goal(store) -> None:
    b = EpisodeBuilder(uuid7(), "Ann_Lee_A3", query="Add leggings to the cart", ground_truth=SHOP)
    b.observation(1, "http://shop.p2w.test/", "Shop", ax_tree=b'[1] link "Cart (0)"\n  /url: /cart')
    b.action(1, "click", "1")
    b.observation(2, "http://shop.p2w.test/cart", "Your cart | Shop", ax_tree=b"[2] paragraph: Your cart is empty.")
    b.action(2, "stop", "Added")
    b.finish("answered", "Added", steps=2)
    assert (await judge(store, b)).points["intent"] == 0.0


async def test_checkout_blocked_by_a_site_error_is_5_and_a_checkout_elsewhere_0(store) -> None:
    b = shop_episode("Add leggings in size M to the cart and go to checkout")
    b.observation(2, "http://shop.p2w.test/cart", "Your cart | Shop", ax_tree=CART_PAGE)
    b.action(2, "click", "9")
    b.observation(3, "http://shop.p2w.test/checkout", "Error 503 | Shop", ax_tree=b"[20] paragraph: Try later")
    b.finish("blocked", detail="HTTP 503 on the main document (http://shop.p2w.test/checkout)", steps=2)
    verdict = await judge(store, b)
    assert verdict.points["intent"] == 5.0
    assert 'link "Proceed to checkout" -> /checkout' in verdict.evidence["intent"].note
    other = EpisodeBuilder(uuid7(), "Ann_Lee_A3", query="Go to checkout with the leggings", ground_truth=SHOP)
    other.observation(1, "http://other.p2w.test/cart", "Your cart | Other", ax_tree=CART_PAGE)
    other.action(1, "click", "9")
    other.observation(2, "http://other.p2w.test/checkout", "Checkout | Other", ax_tree=b'[30] heading "Checkout"')
    other.action(2, "stop", "At checkout")
    other.finish("answered", "At checkout", steps=2)
    wrong = await judge(store, other)
    assert wrong.points["intent"] == 0.0 and "wrong site" in wrong.evidence["intent"].note


async def test_a_reservation_the_site_cannot_seat_is_blocked_5(store) -> None:
    """TableFor answers a slot taken meanwhile with HTTP 409 "No table": an external block after the click."""
    truth = GroundTruth(website="tablefor.p2w.test", websites=["tablefor.p2w.test"], preferences=["6 people"])
    b = EpisodeBuilder(uuid7(), "Ann_Lee_C3", query="Open the reservation details for 6 at 11:00", ground_truth=truth)
    b.observation(1, "http://tablefor.p2w.test/restaurant/r1", "Casa | TableFor", ax_tree=b'[5] link "11:00"\n'
                  b"  /url: /reserve?restaurant=r1&time=11%3A00&party=6")  # fmt: skip
    b.action(1, "click", "5")
    b.observation(2, "http://tablefor.p2w.test/reserve?restaurant=r1", "No table at Casa | TableFor",
                  ax_tree=b"[9] alert: 11:00 is not available for 6.")  # fmt: skip
    b.finish("blocked", detail="HTTP 409 on the main document (http://tablefor.p2w.test/reserve?r=1)", steps=1)
    verdict = await judge(store, b)
    note = verdict.evidence["intent"].note
    assert verdict.points["intent"] == 5.0 and "HTTP 409" in note and 'link "11:00" -> /reserve?' in note


async def test_a_reservation_at_another_time_than_asked_is_a_wrong_item(store) -> None:
    truth = GroundTruth(website="tablefor.p2w.test", websites=["tablefor.p2w.test"], preferences=["4 people"])
    b = EpisodeBuilder(uuid7(), "Ann_Lee_B3", query="Book a table for 4 at 7:00 PM", ground_truth=truth)
    b.observation(1, "http://tablefor.p2w.test/search?city=Austin", "Restaurants", ax_tree=b'[5] link "18:00"\n'
                  b"  /url: /reserve?restaurant=r1&time=18%3A00&party=4")  # fmt: skip
    b.action(1, "click", "5")
    page = b"[9] paragraph: 2026-12-05 at 18:00 \xc2\xb7 Party of 4"
    b.observation(2, "http://tablefor.p2w.test/reserve?restaurant=r1", "Reservation details | TableFor", ax_tree=page)
    b.action(2, "stop", "Reserved")
    b.finish("answered", "Reserved", steps=2)
    verdict = await judge(store, b)
    assert verdict.points["intent"] == 0.0
    assert "time 18:00 on the page, the task asks for 19:00" in verdict.evidence["intent"].note


@pytest.mark.parametrize(
    ("end", "answer", "detail", "url", "points"),
    [
        ("answered", "Open 9-5 on weekdays", None, "http://shop.p2w.test/hours", 10.0),
        ("blocked", None, "CAPTCHA challenge page (title 'Just a moment...')", "http://shop.p2w.test/", 5.0),
        ("blocked", None, "HTTP 404 on the main document (http://shop.p2w.test/x)", "http://shop.p2w.test/x", 0.0),
        ("blocked", None, "CAPTCHA challenge page", "http://elsewhere.p2w.test/", 0.0),
        ("answered", "I could not find any store hours", None, "http://shop.p2w.test/hours", 0.0),
        ("max_steps", None, None, "http://shop.p2w.test/hours", 0.0),
    ],
    ids=["answered", "blocked-on-site", "blocked-by-a-bad-url", "blocked-off-site", "gave-up", "step-limit"],
)
async def test_information_goals_are_decided_from_the_answer(store, end, answer, detail, url, points) -> None:
    b = EpisodeBuilder(uuid7(), "Ann_Lee_C3", query="Find the store hours at shop.p2w.test", ground_truth=SHOP)
    b.observation(1, url, "Shop")
    if answer:
        b.action(1, "stop", answer)
    b.finish(end, answer, steps=1, detail=detail)
    verdict = await judge(store, b)
    assert verdict.points["intent"] == points
    assert verdict.evidence["intent"].note.startswith("information goal")


async def test_the_baselines_read_only_their_view(store) -> None:
    b = EpisodeBuilder(uuid7(), "Ann_Lee_A3", query="Add leggings in size M to the cart", ground_truth=SHOP)
    b.observation(1, "http://shop.p2w.test/product/p1", "Trail Leggings | Shop")  # no AX tree: an imported run
    b.planner(1, "Add the leggings to the cart.")
    b.action(1, "click", "6")
    b.observation(2, "http://shop.p2w.test/cart", "Your cart | Shop")
    b.action(2, "stop", "Added")
    b.finish("answered", "Added", steps=2)
    full = await judge(store, b)
    assert full.points["intent"] == 10.0
    assert "reasoned as 'Add the leggings to the cart'" in full.evidence["intent"].note
    assert "no page content recorded" in full.evidence["intent"].note
    t = await load_trajectory(store, b.stream)
    ctx = JudgeContext(get_blob=store.get_blob)
    assert (await ActionWiseRulesJudge(SETTINGS).judge(t, ctx)).points["intent"] == 0.0, "it sees no reasoning"
    outcome = await OutcomeBasedRulesJudge(SETTINGS).judge(t, ctx)
    assert outcome.points["intent"] == 10.0, "the final page is the cart, after the action its reasoning names"
