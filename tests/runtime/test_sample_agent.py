"""The scripted sample agent, run live: real Chromium on the demo sites, the retriever, the store.

It must do what each task asks, decided from the page it is shown (the final page of the recording says so),
and each slip must fail the way its name says.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import re
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import pytest

from p2w_runtime.agent import AgentConfig, RecordRequest, prompts, record
from p2w_runtime.data import load_tasks
from p2w_runtime.demo.sample import sample_checks, sample_history_dir, sample_tasks_dir
from p2w_runtime.demo.sites import DemoHosting
from p2w_runtime.store import open_store
from p2w_runtime.testing import ScriptedLlm
from p2w_runtime.testing.sample_agent import SampleAgentScript, Slip

SLIPS: dict[str, Slip] = {
    "Marcus_Okafor_C": "wrong_item",
    "Lena_Fischer_A": "stops_early",
    "Priya_Raman_A": "blocked",
    "Lena_Fischer_B": "blocked",
    "Tomas_Reyes_A": "blocked",
}
CLEAN = ("Priya_Raman_C1", "Priya_Raman_B1", "Marcus_Okafor_B1", "Tomas_Reyes_B1")
TASKS = (*CLEAN, *(f"{query_set}1" for query_set in SLIPS))


class Episode:
    def __init__(self, events: list[dict], blobs: dict[str, bytes]) -> None:
        self.events, self.blobs = events, blobs

    def of(self, kind: str) -> list[dict]:
        return [e["payload"] for e in self.events if e["type"] == kind]

    @property
    def finished(self) -> dict:
        return self.of("episode.finished")[0]

    @property
    def final_page(self) -> str:
        return self.blobs[self.of("final_state")[0]["dom_html"]].decode()

    @property
    def urls(self) -> list[str]:
        return [o["url"] for o in self.of("observation")]

    @property
    def actions(self) -> list[str]:
        return [a["raw"] for a in self.of("action")]

    def page_seen(self, url_part: str) -> str:
        """The accessibility text the agent was shown on the last page whose URL contains ``url_part``."""
        seen = [o for o in self.of("observation") if url_part in o["url"]]
        return self.blobs[seen[-1]["ax_tree"]].decode()


@pytest.fixture(scope="module")
def episodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Episode]]:
    db = tmp_path_factory.mktemp("sample-agent") / "agent.db"

    async def run() -> dict[str, Episode]:
        tasks = load_tasks(sample_tasks_dir())
        with ScriptedLlm(models=("scripted-gpt",)) as llm:
            llm.handle_with(SampleAgentScript(tasks, sample_checks(), SLIPS))
            request = RecordRequest(
                tasks_dir=sample_tasks_dir(),
                history_dir=sample_history_dir(),
                model="scripted-gpt",
                label="live",
                base_url=llm.base_url,
                api_key="sk-live",
                concurrency=2,
                task_ids=TASKS,
                config=AgentConfig(scheme="on-demand"),
            )
            async with open_store(db) as store:
                summary = await record(store, request, hosting=DemoHosting())
                out = {}
                for outcome in summary.outcomes:
                    stored = [e async for e in store.read_stream(outcome.stream)]
                    events = [{"type": e.type, "payload": json.loads(e.payload_json)} for e in stored]
                    hashes = {h for e in stored for h in e.blobs}
                    out[outcome.task_id] = Episode(events, {h: await store.get_blob(h) for h in hashes})
                return out

    yield asyncio.run(run())


def test_every_task_ends_on_its_final_page_and_no_final_confirmation_is_pressed(episodes: dict[str, Episode]) -> None:
    assert set(episodes) == set(TASKS)
    for task, episode in episodes.items():
        assert not any(part in url for url in episode.urls for part in ("/confirm", "/place")), task
    for task in CLEAN:
        assert episodes[task].finished["end_reason"] == "answered", task


def test_two_cartons_in_the_cart_with_the_users_zip_and_same_day_delivery(episodes: dict[str, Episode]) -> None:
    episode = episodes["Priya_Raman_C1"]
    assert episode.finished["final_url"] == "http://basket.p2w.test/cart"
    cart = episode.final_page
    assert 'data-product-id="bsk-a01"' in cart and "Size 64 oz · Qty 2" in cart, "two of the unsweetened 64 oz"
    assert "Delivering to 78701" in cart and 'value="same-day" checked' in cart
    assert "Oatley Farms Unsweetened Oat Milk Size 64 oz · Qty 2" in episode.finished["answer"]


def test_the_reservation_details_page_for_four_at_a_thai_place_on_saturday(episodes: dict[str, Episode]) -> None:
    episode = episodes["Priya_Raman_B1"]
    final = urlsplit(episode.finished["final_url"])
    wanted = {k: v[0] for k, v in parse_qs(final.query).items()}
    assert final.path == "/reserve" and (wanted["party"], wanted["time"]) == ("4", "19:00")
    assert dt.date.fromisoformat(wanted["date"]).weekday() == 5, "the task says Saturday"
    assert "Thai ·" in episode.page_seen(f"/restaurant/{wanted['restaurant']}"), "a Thai restaurant's slot was taken"
    page = episode.final_page
    assert "<title>Reservation details" in page and f"{wanted['date']} at 19:00 · Party of 4" in page
    assert any(a.startswith("click [") for a in episode.actions[-2:]), "the slot was clicked, not typed"


def test_two_tickets_within_budget_at_checkout_not_bought(episodes: dict[str, Episode]) -> None:
    episode = episodes["Marcus_Okafor_B1"]
    final = urlsplit(episode.finished["final_url"])
    assert final.path == "/checkout" and parse_qs(final.query)["qty"] == ["2"]
    price = float(re.search(r"2 × [^<]+ at \$([\d.]+)", episode.final_page).group(1))
    assert price < 80, "the user's per-ticket budget"
    assert "Jazz ·" in episode.page_seen("/event/") and "not bought" in episode.finished["answer"]


def test_the_best_reviewed_shoes_in_the_users_size_within_budget(episodes: dict[str, Episode]) -> None:
    episode = episodes["Tomas_Reyes_B1"]
    results = episode.page_seen("/search?")
    listed = re.findall(r'link "([^"]+)"\n\s+/url: /product/\S+\n\s+text: \$([\d.]+) · ([\d.]+) out of 5', results)
    best = max(listed, key=lambda item: float(item[2]))
    assert listed and all(float(price) <= 130 for _, price, _ in listed), "the search applied size and budget"
    cart = episode.final_page
    assert f"{best[0]}</a> · Size 10.5 · Qty 1" in cart


def test_wrong_item_adds_another_result_than_the_best_rated(episodes: dict[str, Episode]) -> None:
    episode = episodes["Marcus_Okafor_C1"]
    results = episode.page_seen("/search?")
    listed = re.findall(r"/url: /product/(\S+)\n\s+text: \$[\d.]+ · ([\d.]+) out of 5", results)
    best = max(listed, key=lambda item: float(item[1]))[0]
    cart = episode.final_page
    added = re.findall(r'class="item" data-product-id="([^"]+)"', cart)
    assert episode.finished["end_reason"] == "answered" and len(added) == 1
    assert added[0] != best and added[0] in dict(listed), "a listed product, but not the best-rated one"


def test_stops_early_answers_on_the_results_page(episodes: dict[str, Episode]) -> None:
    episode = episodes["Lena_Fischer_A1"]
    target = sample_checks()["Lena_Fischer_A"]["target_url"]
    assert episode.finished["end_reason"] == "answered" and episode.finished["final_url"] == target
    assert "Gluten-Free" in episode.finished["answer"] and not any(a.startswith("click") for a in episode.actions)
    assert not any("/product/" in url or "/cart" in url for url in episode.urls), "it never opened the item"


@pytest.mark.parametrize(
    ("task", "deep_link"),
    [("Priya_Raman_A1", "/cart/add?"), ("Lena_Fischer_B1", "/reserve?"), ("Tomas_Reyes_A1", "/checkout?")],
)
def test_blocked_meets_the_bot_wall_at_the_final_step(episodes: dict[str, Episode], task: str, deep_link: str) -> None:
    episode = episodes[task]
    assert episode.finished["end_reason"] == "blocked" and "HTTP 403" in episode.finished["detail"]
    assert deep_link in episode.urls[-1] and episode.actions[-1].startswith("goto [")
    assert "Verify you are human" in episode.page_seen(deep_link)


RESULTS = """[500] main
  [501] link "Ridge Women's Rain Shell"
    /url: /product/thr-x1
  text: $99.00 · 4.2 out of 5 stars (80 reviews) · Sizes: S, M
  [502] link "Cascade Women's Storm Rain Shell"
    /url: /product/thr-x2
  text: $129.00 · 4.8 out of 5 stars (412 reviews) · Sizes: S
  [503] link "Drift Women's Packable Jacket"
    /url: /product/thr-x3
  text: $79.00 · 4.5 out of 5 stars (95 reviews) · Sizes: XS, S"""
PRODUCT = """[600] main
  [601] heading "Cascade Women's Storm Rain Shell" [level=1]
  text: Size
  [602] combobox "Size"
    option "Choose a size" [selected]
    option "XS"
    option "S"
  text: Quantity
  [603] spinbutton "Quantity": 1
  [604] button "Add to cart\""""


def planner_reply(slips: dict[str, Slip], url: str, title: str, ax: str) -> str:
    """What the script answers the planner on the level-0 task Lena_Fischer_C3 shown this page."""
    tasks = load_tasks(sample_tasks_dir())
    task = next(t for t in tasks if t.task_id == "Lena_Fischer_C3")
    page = prompts.page_text(url, title, [title], ax)
    user = prompts.planner_user(task.intent, page, 2, [], [], [])
    request = {
        "messages": [
            {"role": "system", "content": prompts.planner_system("on-demand")},
            {"role": "user", "content": user},
        ]
    }
    return SampleAgentScript(tasks, sample_checks(), slips)(request).content


def test_the_script_reads_ids_and_values_off_the_page_it_is_shown() -> None:
    """Made-up pages with ids and items the demo sites never serve: the replies follow the page, not the sites."""
    results = ("http://threads.p2w.test/search?q=waterproof+rain+jacket&size=S", "Search results | Threads", RESULTS)
    assert "click [502]" in planner_reply({}, *results), "the best-rated of the listed results"
    assert "click [503]" in planner_reply({"Lena_Fischer_C": "wrong_item"}, *results), "the one listed after it"
    assert "stop [The best match on threads.p2w.test is Cascade" in planner_reply(
        {"Lena_Fischer_C": "stops_early"}, *results
    )
    product = ("http://threads.p2w.test/product/thr-x2", "Cascade Women's Storm Rain Shell | Threads", PRODUCT)
    assert "type [602] [S] [0]" in planner_reply({}, *product), "size S, as the task says"
    chosen = product[:2] + (
        PRODUCT.replace('option "Choose a size" [selected]', 'option "Choose a size"').replace(
            'option "S"', 'option "S" [selected]'
        ),
    )
    assert "click [604]" in planner_reply({}, *chosen)
    blocked = planner_reply({"Lena_Fischer_C": "blocked"}, *chosen)
    assert "goto [http://threads.p2w.test/cart/add?product_id=thr-x2&size=S&qty=1]" in blocked


def test_a_slip_keyed_by_task_id_applies_to_that_task_only() -> None:
    """``Lena_Fischer_C3`` (level 0) slips when keyed by its own id, not when another level's id is the key."""
    results = ("http://threads.p2w.test/search?q=waterproof+rain+jacket&size=S", "Search results | Threads", RESULTS)
    assert "click [503]" in planner_reply({"Lena_Fischer_C3": "wrong_item"}, *results), "its own id"
    assert "click [502]" in planner_reply({"Lena_Fischer_C1": "wrong_item"}, *results), "the level-2 task's id"
    own = planner_reply({"Lena_Fischer_C": "wrong_item", "Lena_Fischer_C3": "stops_early"}, *results)
    assert "stop [The best match" in own, "a task's own slip overrides its query set's"
