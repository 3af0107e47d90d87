"""Intent on imported runs: files written as the Persona2Web runners write them (tests/data/runners' writers), with
URLs, action text, reasoning and the answer only; the evidence note says so.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from p2w_runtime.store import EventStore
from tests.helpers.import_support import AGENTOCCAM, BROWSER_USE, RUNNERS, import_folder, run_import
from tests.helpers.rubric_support import judged


@pytest.fixture
def store(memory_store: EventStore) -> EventStore:
    """These tests need a store, not SQL: the in-memory one (docs/design/store.md, "The memory store")."""
    return memory_store


THREADS, TABLEFOR, STAGEPASS = "http://threads.p2w.test", "http://tablefor.p2w.test", "http://stagepass.p2w.test"


@pytest.fixture
def writers(monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    monkeypatch.syspath_prepend(str(RUNNERS))
    return importlib.import_module("agentoccam_writer"), importlib.import_module("browser_use_writer")


def _agentoccam(ao: Any, folder: Path, task_id: str, objective: str, steps: list[tuple[str, str, str]]) -> None:
    """One AgentOccam log of (url, reason, action) steps, as ``log_step`` and ``log_run`` write it."""
    plan = f'[0] (Active Plan) Find the solution to "{objective}"'
    trajectory = [
        ao.agentoccam_step(objective, url, ao.status(i == len(steps), i + 1), plan, {"reason": reason, "action": act})
        for i, (url, reason, act) in enumerate(steps, 1)
    ]
    ao.write_agentoccam(
        folder, model="gpt-4.1", memory_mode="on-demand", task_id=task_id, trajectory=trajectory, memory=[], elapsed=9.0
    )


def write_agentoccam_runs(ao: Any, root: Path) -> Path:
    folder = root / "on-demand_gpt41"
    folder.mkdir(parents=True)
    (folder / "on-demand_gpt41.yml").write_text("logging: True\nagent:\n  memory_mode: on-demand\n")
    leggings = f"{THREADS}/product/thr-a11"
    legs = "Query: Find women's running leggings ... add the best match to the cart."
    _agentoccam(ao, folder, "Priya_Raman_A1", legs, [
        (f"{THREADS}/search?q=running+leggings&size=M", "Open the best match.", "click [40]"),
        (leggings, "Add the leggings in size M to the cart.", "click [66]"),
        (f"{THREADS}/cart", "The cart holds them.", "stop [Added the leggings in size M to the cart]"),
    ])  # fmt: skip
    jacket = "Query: Find a women's rain jacket ... add the best-rated one to the cart."
    _agentoccam(ao, folder, "Lena_Fischer_C1", jacket, [
        (f"{THREADS}/product/thr-a21", "Add the jacket in size S to the cart.", "click [65]"),
        (f"{THREADS}/blocked", "A CAPTCHA appeared.", "stop [CAPTCHA detected, automatically stopped]"),
    ])  # fmt: skip
    event = f"{STAGEPASS}/event/sp-a01"
    _agentoccam(ao, folder, "Marcus_Okafor_B1", "Query: Find concerts in Chicago ... go to checkout without buying.", [
        (event, "Continue to checkout with 2 tickets.", "click [30]"),
        (f"{STAGEPASS}/checkout?event=sp-a01&tier=General+Admission&qty=2", "At checkout; stop.", "stop [At checkout]"),
    ])  # fmt: skip
    _agentoccam(ao, folder, "Tomas_Reyes_C1", "Query: Book Sunday brunch at 11:00 AM ... without confirming.", [
        (f"{TABLEFOR}/search?city=Denver&cuisine=Mexican", "La Paloma fits.", "stop [Booked brunch at La Paloma]"),
    ])  # fmt: skip
    return folder


def write_browser_use_runs(bu: Any, root: Path) -> Path:
    run = bu.BrowserUseRun(
        root / "on-demand_gpt41_1", experiment_id="1", provider="openai", model="gpt-4.1", scheme="on-demand"
    )
    results = f"{TABLEFOR}/search?city=Austin&cuisine=Thai&party=4&time=19:00"
    run.finished("Priya_Raman_B1", [
        bu.navigation_step(1, "about:blank", "Find Thai tables in Austin.", [{"action": "navigate", "url": results}]),
        bu.navigation_step(2, results, "Open the 19:00 slot.", [{"action": "click", "element_index": 39}]),
        bu.navigation_step(3, f"{TABLEFOR}/reserve?restaurant=tf-a01&time=19%3A00&party=4", "Details open.",
                           [{"action": "done", "text": "Opened the reservation details"}]),
    ], success=True)  # fmt: skip
    run.finished("Lena_Fischer_A1", [
        bu.navigation_step(1, f"{THREADS}/product/thr-a99", "Add the penne to the cart.",
                           [{"action": "click", "element_index": 12}, {"action": "done", "text": "Added two boxes"}]),
    ], success=True)  # fmt: skip
    run.close()
    return run.out_dir


async def test_imported_runs_are_scored_from_urls_action_text_and_reasoning(
    store: EventStore, tmp_path: Path, writers: tuple[Any, Any]
) -> None:
    ao, bu = writers
    first = await import_folder(store, AGENTOCCAM, write_agentoccam_runs(ao, tmp_path / "logs"))
    second = await import_folder(store, BROWSER_USE, write_browser_use_runs(bu, tmp_path / "result"))
    got = await judged(store, [first, second])
    points = {task: v.points["intent"] for task, v in got.items()}
    assert points == {
        "Priya_Raman_A1": 10.0,  # cart: a click reasoned as "add ... to the cart", then the cart URL
        "Lena_Fischer_C1": 5.0,  # cart: the same click, then the runner's CAPTCHA stop
        "Marcus_Okafor_B1": 10.0,  # checkout: the checkout URL after "continue to checkout"
        "Tomas_Reyes_C1": 0.0,  # reservation: "booked" in the answer, no reservation page
        "Priya_Raman_B1": 10.0,  # reservation: the /reserve URL after the slot click
        "Lena_Fischer_A1": 0.0,  # cart: added on threads, the task's grocery site is basket
    }
    notes = {task: v.evidence["intent"].note for task, v in got.items()}
    assert "reasoned as 'Add the leggings in size M to the cart'" in notes["Priya_Raman_A1"]
    assert f"{THREADS}/cart (no page content recorded)" in notes["Priya_Raman_A1"]
    assert "blocked after the decisive action" in notes["Lena_Fischer_C1"] and "CAPTCHA" in notes["Lena_Fischer_C1"]
    assert "no page content recorded" in notes["Tomas_Reyes_C1"]
    assert (
        "wrong site" in notes["Lena_Fischer_A1"]
        and "no page content recorded to confirm it" in notes["Lena_Fischer_A1"]
    )


async def test_the_bundled_examples_by_goal_kind(store: EventStore) -> None:
    """The importer examples: information goals decided from the answer, a booking page reached, a cart never."""
    runs = [await run_import(store, AGENTOCCAM, label="ao"), await run_import(store, BROWSER_USE, label="bu")]
    got = {
        task: (v.points["intent"], v.evidence["intent"].note.split(";")[0])
        for task, v in (await judged(store, runs)).items()
    }
    assert got == {
        "Jordan_Park_A1": (10.0, "information goal"),
        "Mina_Okafor_A2": (0.0, "information goal"),  # the runner's step limit, no answer
        "Mina_Okafor_A1": (10.0, "information goal"),
        "Jordan_Park_B2": (10.0, "reservation goal achieved"),  # opentable.com/booking/details reached
        "Theo_Lindqvist_A1": (0.0, "cart goal ('add the milk i can drink to my cart')"),
        "Theo_Lindqvist_A2": (0.0, "cart goal ('add lactose-free 2% milk, half gallon under $5 to the cart')"),
    }
