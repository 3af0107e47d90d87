"""P_pref from what was applied (issue 41): a step's reasoning counts only where the step's action acts on it.

The bundled demo's ``Marcus_Okafor_A*`` (recorded in Chromium): the plan at step 6 lists "34x30, 4 stars and up,
below $50, delivery near Chicago", the action is ``goto http://basket.p2w.test/search?q=slim+chinos`` (the wrong
site, no filter). The rubric's reading: every value retrieved (10 of 20), none applied, P_pref 0.5.
"""

from __future__ import annotations

import pytest

from p2w_rt.replay.classify import RulesClassifier
from p2w_rt.replay.derived import PassSettings
from p2w_rt.replay.persona2web import RubricRulesJudge, SiteSettings, default_location_sites, reasoned_steps
from p2w_rt.schemas import GroundTruth
from p2w_runtime.demo.examples import example_run_bundles
from p2w_runtime.domain import episodes_of
from p2w_runtime.domain.trajectory import Trajectory, load_trajectory
from p2w_runtime.store import EventStore, import_bundle
from p2w_runtime.testing.episodes import EpisodeBuilder

SETTINGS = PassSettings(plugins=(SiteSettings(location_sites=tuple(default_location_sites())),))


@pytest.fixture
def store(memory_store: EventStore) -> EventStore:
    return memory_store


async def _demo(store: EventStore, label: str, task: str) -> Trajectory:
    bundle = next(b for b in example_run_bundles() if b.stem == label)
    run_id = (await import_bundle(store, bundle)).run_id
    ref = next(r for r in await episodes_of(store, run_id) if r.task_id == task)
    return await load_trajectory(store, ref.stream)


@pytest.mark.parametrize("task", ["Marcus_Okafor_A1", "Marcus_Okafor_A2"])
async def test_a_plan_the_action_contradicts_earns_no_utilization(store: EventStore, task: str) -> None:
    t = await _demo(store, "earlier", task)
    goto = next(a for a in t.actions if a.name == "goto")
    assert goto.parsed is not None and goto.parsed.args[0] == "http://basket.p2w.test/search?q=slim+chinos"
    assert goto.step not in reasoned_steps(t, ("34x30", "4 stars and up", "below $50", "Chicago"))
    verdict = RubricRulesJudge(SETTINGS).score(t)
    utilization = {k: v for k, v in verdict.points.items() if k.endswith(".utilization") and k != "web.utilization"}
    retrieval = {k: v for k, v in verdict.points.items() if k.endswith(".retrieval") and k != "web.retrieval"}
    assert set(utilization.values()) == {0.0} and set(retrieval.values()) == {2.5}
    assert verdict.metrics["p_pref"] == 0.5  # was 1.0: the plan's wording counted as applied
    # the rules classifier reads the same: retrieved, never applied
    labels = {lab.label: lab for lab in RulesClassifier(SETTINGS).label(t).labels}
    assert "34x30" in labels["history_utilization_failure"].explanation


async def test_a_plan_the_action_acts_on_keeps_its_wording(store: EventStore) -> None:
    """``later``'s Lena_Fischer_B1: the goto carries the city and cuisine; the plan's "$$ or less" (price=2) counts."""
    t = await _demo(store, "later", "Lena_Fischer_B1")
    verdict = RubricRulesJudge(SETTINGS).score(t)
    assert verdict.metrics["p_pref"] == 1.0
    assert "planner reasoning at step 5" in verdict.evidence["pref.2.utilization"].note


def _typed(text: str, *, then_click: bool = False) -> Trajectory:
    truth = GroundTruth(website="threads.p2w.test", websites=["threads.p2w.test"], preferences=["size M", "under $60"])
    b = EpisodeBuilder("run", "Priya_Raman_A1", query="Find leggings", ground_truth=truth, level=2)
    b.observation(1, "http://threads.p2w.test/")
    b.planner(1, "I search leggings in size M under $60")
    b.action(1, "type", "12", text, "1")
    if then_click:
        b.observation(2, "http://threads.p2w.test/product/thr-a01")
        b.planner(2, "This pair is size M and under $60; I add it to the cart")
        b.action(2, "click", "66")
    b.action(3, "stop", "Added them")
    b.finish("answered", "Added them", steps=3)
    return b.trajectory()


def test_only_the_values_an_action_applies_count_and_a_press_keeps_its_reasoning() -> None:
    judge = RubricRulesJudge(SETTINGS)
    points = judge.score(_typed("running leggings")).points
    assert (points["pref.1.utilization"], points["pref.2.utilization"]) == (0.0, 0.0)
    points = judge.score(_typed("running leggings size M")).points  # the typed text applies size M: the plan counts
    assert (points["pref.1.utilization"], points["pref.2.utilization"]) == (2.5, 2.5)
    points = judge.score(_typed("running leggings", then_click=True)).points  # a click contradicts nothing
    assert (points["pref.1.utilization"], points["pref.2.utilization"]) == (2.5, 2.5)
