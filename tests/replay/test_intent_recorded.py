"""Intent on real recordings: the agent loop in Chromium on the demo sites, driven by a script that presses
"Add to cart", opens a reservation, goes to checkout, or stops short, and the rules judges reading what was recorded.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.replay.derived import PassSettings
from p2w_rt.replay.judges import JudgeContext, Scorecard
from p2w_rt.replay.persona2web import (
    ActionWiseRulesJudge,
    OutcomeBasedRulesJudge,
    RubricRulesJudge,
    SiteSettings,
    default_location_sites,
)
from p2w_runtime.data import load_tasks
from p2w_runtime.demo.sample import sample_tasks_dir
from p2w_runtime.domain import list_runs
from p2w_runtime.domain.trajectory import Trajectory, load_trajectories
from p2w_runtime.store import open_store
from p2w_runtime.testing import ScriptedLlm, Text, last_user_message

SETTINGS = PassSettings(plugins=(SiteSettings(location_sites=tuple(default_location_sites())),))
THREADS, BASKET = "http://threads.p2w.test", "http://basket.p2w.test"
TABLEFOR, STAGEPASS = "http://tablefor.p2w.test", "http://stagepass.p2w.test"
Step = Callable[[str], str]
"""One planned step: the page text the planner got -> the action it answers."""


def ref(page: str, role: str, name: str = "") -> str:
    """The id of the first ``[N] role "name..."`` node (name a regex, matched from its start)."""
    found = re.search(rf'\[(\d+)\] {role} "{name}', page)
    assert found, f"no {role} {name!r} on the page:\n{page[:3000]}"
    return found.group(1)


def link_to(page: str, path: str) -> str:
    """The id of the first link whose ``/url:`` starts with ``path``."""
    found = re.search(rf'\[(\d+)\] link "[^"\n]*"\n\s*/url: {re.escape(path)}', page)
    assert found, f"no link to {path} on the page:\n{page[:3000]}"
    return found.group(1)


def second_link_to(page: str, path: str) -> str:
    """The id of the second link whose ``/url:`` starts with ``path`` (the result listed after the first)."""
    found = re.findall(rf'\[(\d+)\] link "[^"\n]*"\n\s*/url: {re.escape(path)}', page)
    assert len(found) > 1, f"fewer than two links to {path} on the page:\n{page[:3000]}"
    return found[1]


def other_size(page: str, unwanted: str) -> str:
    sizes = re.findall(r'option "([^"]+)"', page.split('combobox "Size"', 1)[1].split("spinbutton", 1)[0])
    return next(s for s in sizes if s not in (unwanted, "Choose a size"))


def unbookable(page: str) -> str:
    """A restaurant listed without an 11:00 slot: its reserve page at 11:00, typed (the bot wall answers it);
    else the next day.

    The listing shows the free times nearest the asked one, so 11:00 is missing exactly when it is taken.
    """
    date = re.search(r"for 6 on ([\d-]+)", page).group(1)
    for rid, slots in re.findall(
        r"/url: /restaurant/([\w-]+)\?[^\n]*\n([^\[]*(?:\[\d+\] link \"\d\d:\d\d\"[^\[]*)*)", page
    ):
        if "No tables" in slots or '"11:00"' not in slots:
            return f"{TABLEFOR}/reserve?restaurant={rid}&date={date}&time=11:00&party=6"
    day = dt.date.fromisoformat(date) + dt.timedelta(days=1)
    return f"{TABLEFOR}/search?city=Denver&cuisine=Mexican&party=6&time=11:00&date={day.isoformat()}"


def slot_or_next_day(page: str) -> str:
    """Press the 19:00 slot of the first restaurant offering it, else look at the next day."""
    found = re.search(r'\[(\d+)\] link "19:00"', page)
    if found:
        return f"click [{found.group(1)}]"
    date = re.search(r"for 4 on ([\d-]+)", page).group(1)
    day = dt.date.fromisoformat(date) + dt.timedelta(days=1)
    return f"goto [{TABLEFOR}/search?city=Austin&cuisine=Thai&party=4&time=19:00&date={day.isoformat()}]"


PLANS: dict[str, list[Step]] = {
    # cart, 10: the size chosen, "Add to cart" pressed, the cart reached
    "Tomas_Reyes_B3": [
        lambda p: f"goto [{THREADS}/search?q=trail+running+shoes&size=10.5&max_price=130]",
        lambda p: f"click [{link_to(p, '/product/')}]",
        lambda p: f"type [{ref(p, 'combobox', 'Size')}] [10.5] [0]",
        lambda p: f"click [{ref(p, 'button', 'Add to cart')}]",
        lambda p: "stop [Added Ridgeline Men's Trail Running Shoes, size 10.5, $119, to the cart]",
    ],
    # cart, 0: the answer says "added", nothing was pressed
    "Marcus_Okafor_A3": [
        lambda p: f"goto [{THREADS}/search?q=slim+chinos&size=34x30&min_rating=4&max_price=50]",
        lambda p: f"click [{link_to(p, '/product/')}]",
        lambda p: "stop [Added the slim chinos in 34x30 to the cart]",
    ],
    # cart, 0, wrong item: another size than the task's "size M" put in the cart
    "Priya_Raman_A3": [
        lambda p: f"goto [{THREADS}/search?q=running+leggings&min_rating=4.5&max_price=60]",
        lambda p: f"click [{link_to(p, '/product/')}]",
        lambda p: f"type [{ref(p, 'combobox', 'Size')}] [{other_size(p, 'M')}] [0]",
        lambda p: f"click [{ref(p, 'button', 'Add to cart')}]",
        lambda p: "stop [Added the leggings to the cart]",
    ],
    # cart, 0: "Add to cart" without a size; the shop answers 400, the agent's own error, not an external block
    "Lena_Fischer_C3": [
        lambda p: f"goto [{THREADS}/search?q=rain+jacket&category=womens-jackets&size=S]",
        lambda p: f"click [{link_to(p, '/product/')}]",
        lambda p: f"click [{ref(p, 'button', 'Add to cart')}]",
        lambda p: "stop [Added the jacket to the cart]",
    ],
    # cart, 0, constraint violated: two added, then "Place order" pressed (the browser refuses it)
    "Priya_Raman_C3": [
        lambda p: f"goto [{BASKET}/search?q=unsweetened+oat+milk]",
        lambda p: f"click [{link_to(p, '/product/')}]",
        lambda p: f"type [{ref(p, 'spinbutton', 'Quantity')}] [2] [0]",
        lambda p: f"click [{ref(p, 'button', 'Add to cart')}]",
        lambda p: f"click [{link_to(p, '/checkout')}]",
        lambda p: f"click [{ref(p, 'button', 'Place order')}]",
        lambda p: "stop [Ordered two cartons]",
    ],
    # cart, 0, constraint violated: one box in the cart, the task says two
    "Lena_Fischer_A3": [
        lambda p: f"goto [{BASKET}/search?q=gluten-free+organic+penne]",
        lambda p: f"click [{link_to(p, '/product/')}]",
        lambda p: f"click [{ref(p, 'button', 'Add to cart')}]",
        lambda p: "stop [Added two boxes of penne to the cart]",
    ],
    # cart, 0, wrong item: the second result opened and added, though the first is rated higher ("best-rated")
    "Marcus_Okafor_C3": [
        lambda p: f"goto [{BASKET}/search?q=noise+cancelling+earbuds&max_price=100]",
        lambda p: f"click [{second_link_to(p, '/product/')}]",
        lambda p: f"click [{ref(p, 'button', 'Add to cart')}]",
        lambda p: "stop [Added the best-rated earbuds to the cart]",
    ],
    # reservation, 10: the 19:00 slot pressed (on the first day it is free), the reservation details page reached
    "Priya_Raman_B3": [
        lambda p: f"goto [{TABLEFOR}/search?city=Austin&cuisine=Thai&party=4&time=19:00]",
        lambda p: slot_or_next_day(p),
        lambda p: (
            "stop [Opened the reservation details for 4 at 19:00]"
            if "Reservation details" in p
            else slot_or_next_day(p)
        ),
    ],
    # reservation, 5: the reservation page opened by a typed URL, which the site answers with its CAPTCHA wall
    # (HTTP 403, docs/design/demo-sites.md); the site's own "no table" (HTTP 409) is a built case in test_intent_goals
    "Tomas_Reyes_C3": [
        lambda p: f"goto [{TABLEFOR}/search?city=Denver&cuisine=Mexican&party=6&time=11:00]",
        lambda p: f"goto [{unbookable(p)}]",  # a typed reserve URL: the bot wall (403) ends the episode
    ],
    # reservation, 0: the results page, never a reservation details page, though the answer says "found"
    "Lena_Fischer_B3": [
        lambda p: f"goto [{TABLEFOR}/search?city=Seattle&cuisine=Vegetarian&price=2&party=2&time=20:00]",
        lambda p: "stop [Found a vegetarian table for two at 20:00]",
    ],
    # checkout, 10: an event chosen, "Continue to checkout" pressed with 2 tickets
    "Tomas_Reyes_A3": [
        lambda p: f"goto [{STAGEPASS}/search?city=Denver&genre=comedy&max_price=40]",
        lambda p: f"click [{link_to(p, '/event/')}]",
        lambda p: f"click [{ref(p, 'button', 'Continue to checkout')}]",
        lambda p: "stop [At checkout with 2 tickets, not bought]",
    ],
    # checkout, 0, constraint violated: "Buy tickets" pressed although the task says "without buying"
    "Marcus_Okafor_B3": [
        lambda p: f"goto [{STAGEPASS}/search?city=Chicago&genre=jazz&max_price=80]",
        lambda p: f"click [{link_to(p, '/event/')}]",
        lambda p: f"click [{ref(p, 'button', 'Continue to checkout')}]",
        lambda p: f"click [{ref(p, 'button', 'Buy tickets')}]",
        lambda p: "stop [Bought the tickets]",
    ],
}


class Planner:
    """Answers the planner's request with the next step of the task's plan (matched by the task text)."""

    def __init__(self) -> None:
        self.by_text = {t.intent: t.task_id for t in load_tasks(sample_tasks_dir()) if t.task_id in PLANS}

    def __call__(self, request: dict) -> Text:
        user = last_user_message(request)
        task = next(tid for text, tid in self.by_text.items() if f"TASK: {text}" in user)
        step = int(re.search(r"CURRENT PAGE \(step (\d+)\)", user).group(1))
        page = user.split("CURRENT PAGE", 1)[1]
        plan = PLANS[task]
        action = plan[min(step, len(plan)) - 1](page)
        return Text(f"Thought: step {step} of the plan for {task}\nAction: ```{action}```")


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, dict[str, Scorecard]]]:
    """Record every plan once (one run, no history), then judge each episode with the three rules judges."""
    db = tmp_path_factory.mktemp("intent") / "rec.db"
    with ScriptedLlm() as llm:
        llm.handle_with(Planner())
        tasks = [arg for task in PLANS for arg in ("--task", task)]
        args = ["--model", "scripted", "--base-url", llm.base_url, "--api-key", "sk-x", "--scheme", "no-history"]
        result = CliRunner().invoke(
            main, ["--db", str(db), "record", *args, *tasks, "--label", "intent"], catch_exceptions=False
        )
    assert result.exit_code == 0, result.output
    yield asyncio.run(_judge_all(db))


async def _judge_all(db: Path) -> dict[str, dict[str, Scorecard]]:
    judges = [RubricRulesJudge(SETTINGS), ActionWiseRulesJudge(SETTINGS), OutcomeBasedRulesJudge(SETTINGS)]
    out: dict[str, dict[str, Scorecard]] = {}
    async with open_store(db) as store:
        (run,) = await list_runs(store)
        async for t in load_trajectories(store, run.run_id):
            ctx = JudgeContext(get_blob=store.get_blob)
            out[t.task_id] = {j.id: await j.judge(t, ctx) for j in judges}
            out[t.task_id]["trajectory"] = t  # type: ignore[assignment]
    return out


def intent(judged: dict, task: str, judge: str = "rubric-rules") -> tuple[float, str, list[str]]:
    evidence = judged[task][judge].evidence["intent"]
    return judged[task][judge].points["intent"], evidence.note, evidence.event_ids


def trajectory(judged: dict, task: str) -> Trajectory:
    return judged[task]["trajectory"]


def test_cart_reached_after_pressing_add_to_cart_is_10(judged: dict) -> None:
    points, note, ids = intent(judged, "Tomas_Reyes_B3")
    t = trajectory(judged, "Tomas_Reyes_B3")
    press = next(a for a in t.actions if a.raw.startswith("click") and a.step == 4)
    cart = next(o for o in t.observations if o.url == f"{THREADS}/cart")
    assert points == 10.0 and ids == [press.event_id, cart.event_id]
    assert 'button "Add to cart" (AX tree of step 4)' in note and f"{THREADS}/cart (AX tree recorded)" in note
    assert judged["Tomas_Reyes_B3"]["rubric-rules"].metrics["intent"] == 1.0
    assert intent(judged, "Tomas_Reyes_B3", "action-wise-rules")[0] == 10.0
    assert intent(judged, "Tomas_Reyes_B3", "outcome-based-rules")[0] == 10.0


def test_the_best_reviewed_result_added_is_checked_against_the_listing(judged: dict) -> None:
    _, note, _ = intent(judged, "Tomas_Reyes_B3")
    assert "'best-reviewed': 'Ridgeline Men's Trail Running Shoes' rated 4.5 is the best of" in note
    assert "listed on the results page of step 2" in note


def test_a_result_rated_lower_than_another_listed_is_a_wrong_item_for_the_best_rated(judged: dict) -> None:
    points, note, ids = intent(judged, "Marcus_Okafor_C3")
    t = trajectory(judged, "Marcus_Okafor_C3")
    assert any(o.url == f"{BASKET}/cart" for o in t.observations), "the cart was reached"
    assert points == 0.0 and judged["Marcus_Okafor_C3"]["rubric-rules"].metrics["intent"] == 0.0
    assert (
        "wrong item: 'Wavelength Lite Noise Cancelling Headphones' rated 4.4 chosen, "
        "'Sonora Noise Cancelling Wireless Earbuds' rated 4.5 listed on the results page of step 2; "
        "the task asks for the best-rated"
    ) in note
    assert intent(judged, "Marcus_Okafor_C3", "action-wise-rules")[0] == 0.0
    points, note, _ = intent(judged, "Marcus_Okafor_C3", "outcome-based-rules")
    assert points == 10.0 and "'best-rated' not checked: the page of the decisive action is not in this view" in note


def test_an_answer_claiming_the_cart_without_the_press_is_0(judged: dict) -> None:
    points, note, _ = intent(judged, "Marcus_Okafor_A3")
    assert points == 0.0 and "no decisive action found" in note and "recorded AX trees" in note
    assert trajectory(judged, "Marcus_Okafor_A3").answer == "Added the slim chinos in 34x30 to the cart"
    for judge in ("action-wise-rules", "outcome-based-rules"):
        assert intent(judged, "Marcus_Okafor_A3", judge)[0] == 0.0


def test_another_size_in_the_cart_is_a_wrong_item(judged: dict) -> None:
    points, note, _ = intent(judged, "Priya_Raman_A3")
    assert points == 0.0 and "constraint violated: size" in note and "the task asks for m" in note


def test_a_bad_request_of_the_agent_is_not_an_external_block(judged: dict) -> None:
    t = trajectory(judged, "Lena_Fischer_C3")
    assert t.end_reason == "blocked" and (t.end_detail or "").startswith("HTTP 400")
    points, note, _ = intent(judged, "Lena_Fischer_C3")
    assert points == 0.0 and "last attempt: click on [" in note and 'button "Add to cart"' in note


def test_pressing_a_final_confirmation_violates_the_task(judged: dict) -> None:
    t = trajectory(judged, "Priya_Raman_C3")
    refused = next(a for a in t.actions if a.status == "blocked")
    points, note, ids = intent(judged, "Priya_Raman_C3")
    assert points == 0.0 and ids == [refused.event_id] and "pressed a final confirmation at step 6" in note
    assert any(o.url == f"{BASKET}/checkout" for o in t.observations), "the cart and checkout were reached before"


def test_one_box_when_the_task_says_two_violates_the_task(judged: dict) -> None:
    points, note, _ = intent(judged, "Lena_Fischer_A3")
    assert points == 0.0 and "quantity 1 on the page, the task asks for 2" in note


def test_reservation_details_reached_by_a_time_slot_is_10(judged: dict) -> None:
    points, note, _ = intent(judged, "Priya_Raman_B3")
    assert points == 10.0 and "reservation goal achieved" in note and 'link "19:00" -> /reserve?' in note


def test_a_reservation_page_behind_the_sites_captcha_is_blocked_5(judged: dict) -> None:
    t = trajectory(judged, "Tomas_Reyes_C3")
    assert t.end_reason == "blocked" and (t.end_detail or "").startswith("HTTP 403")
    points, note, _ = intent(judged, "Tomas_Reyes_C3")
    assert points == 5.0 and "blocked after the decisive action: goto" in note and "HTTP 403" in note


def test_stopping_on_the_results_is_no_reservation(judged: dict) -> None:
    points, note, _ = intent(judged, "Lena_Fischer_B3")
    assert trajectory(judged, "Lena_Fischer_B3").end_reason == "answered"
    assert points == 0.0 and "the reservation details page was not reached" in note and "no decisive action" in note


def test_checkout_reached_with_the_tickets_asked_for_is_10(judged: dict) -> None:
    points, note, _ = intent(judged, "Tomas_Reyes_A3")
    assert points == 10.0 and "checkout goal achieved" in note and 'button "Continue to checkout"' in note
    assert re.search(r"'soonest': '[^']+' on \d{4}-\d\d-\d\d \d\d:\d\d is the best of \d+ listed", note), note


def test_buying_when_told_not_to_is_0(judged: dict) -> None:
    points, note, _ = intent(judged, "Marcus_Okafor_B3")
    assert points == 0.0 and "final confirmation" in note
