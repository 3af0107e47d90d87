"""rubric-rules and the rules baselines on hand-built trajectories whose points are known, one per rubric line."""

from __future__ import annotations

import pytest

from p2w_rt.replay.derived import PassSettings
from p2w_rt.replay.judges import JudgeError
from p2w_rt.replay.persona2web import (
    ActionWiseRulesJudge,
    OutcomeBasedRulesJudge,
    RubricRulesJudge,
    SiteSettings,
    rubric_metrics,
)
from p2w_rt.schemas import GroundTruth, Location, MemoryEntry
from p2w_runtime.domain.trajectory import Trajectory
from p2w_runtime.testing.episodes import EpisodeBuilder

LA = Location(city="Los Angeles", state="CA", zip="90210", raw="Los Angeles, CA 90210")
AMAZON = GroundTruth(website="amazon.com", websites=["amazon.com"], preferences=["32x32", "$70"], location=LA)
KOHLS = GroundTruth(website="kohls.com", websites=["kohls.com"], preferences=["32x32", "$70"], location=LA)
SETTINGS = PassSettings(
    plugins=(SiteSettings(location_sites=("amazon.com", "instacart.com", "resy.com", "opentable.com")),)
)

ALL = {
    "web.retrieval": 5.0,
    "web.utilization": 5.0,
    "pref.1.retrieval": 2.5,
    "pref.1.utilization": 2.5,
    "pref.2.retrieval": 2.5,
    "pref.2.utilization": 2.5,
    "location.retrieval": 2.5,
    "location.utilization": 2.5,
    "intent": 10.0,
}


def episode(
    truth: GroundTruth = AMAZON,
    *,
    site_in_memory: bool = True,
    visit_site: bool = True,
    size_in_memory: bool = True,
    type_size: bool = True,
    budget_in_memory: bool = True,
    budget_in_reasoning: bool = True,
    city_in_memory: bool = True,
    zip_in_url: bool = True,
    end: str = "answered",
    answer: str | None = "Slim chinos, in stock",
    leave_site: bool = False,
    query: str = "Find me chinos",
) -> tuple[Trajectory, dict[str, str]]:
    """A clean on-demand episode; each flag removes exactly what one rubric line looks for."""
    b = EpisodeBuilder("run", "Alex_Garcia_A1", query=query, ground_truth=truth, level=2)
    ids: dict[str, str] = {}
    site = "amazon.com" if site_in_memory else "target.com"
    q = b.history_query("Which store and size for chinos?", step=1, reason="the task does not say")
    entries = [
        MemoryEntry(
            timestamp="2024-01-02",
            type="purchase",
            object="slim chinos" + (" 32x32" if size_in_memory else ""),
            website=site,
        ),
        MemoryEntry(timestamp="2024-02-03", type="web search", object="chinos near me"),
    ]
    ids["retrieval"] = b.retrieval(q, "Which store and size for chinos?", entries, step=1)
    memory = "The user shops for chinos"
    memory += " and keeps a $70 budget" if budget_in_memory else ""
    memory += ", delivered in Los Angeles." if city_in_memory else "."
    ids["answer"] = b.memory_answer(ids["retrieval"], memory, step=1)
    b.action(1, "memory_access", "Which store and size for chinos?")
    b.planner(1, "I need the budget: under $70 per the history")
    host = "https://www.amazon.com" if visit_site else "https://www.bing.com"
    ids["obs"] = b.observation(2, f"{host}/s?k=chinos" + ("&zip=90210" if zip_in_url else ""))
    reasoning = "Searching slim chinos" + (" and filtering to at most $70" if budget_in_reasoning else "")
    ids["reasoning"] = b.planner(2, reasoning)
    ids["type"] = b.action(2, "type", "14", "slim chinos 32x32" if type_size else "slim chinos", "1")
    if leave_site:
        b.observation(3, "https://www.bing.com/")
    b.planner(3, "Found them")
    b.action(3, "stop", answer or "")
    ids["finish"] = b.finish(end, answer, steps=3, detail="CAPTCHA" if end == "blocked" else None)
    return b.trajectory(), ids


def points(t: Trajectory, judge: type = RubricRulesJudge) -> dict[str, float]:
    return judge(SETTINGS).score(t).points


def expect(**changes: float) -> dict[str, float]:
    return {**ALL, **{k.replace("__", "."): v for k, v in changes.items()}}


def test_clean_episode_earns_every_point_with_evidence() -> None:
    t, ids = episode()
    verdict = RubricRulesJudge(SETTINGS).score(t)
    assert verdict.points == ALL and verdict.max_points == ALL
    assert verdict.metrics == {"p_web": 1.0, "p_pref": 1.0, "p_avg": 1.0, "intent": 1.0, "success": 1.0}
    ev = verdict.evidence
    assert ev["web.retrieval"].event_ids == [ids["retrieval"]] and ev["web.retrieval"].text == "amazon.com"
    assert ev["web.utilization"].event_ids == [ids["obs"]]
    assert ev["pref.1.retrieval"].event_ids == [ids["retrieval"]] and ev["pref.1.retrieval"].text == "32x32"
    assert (
        ev["pref.1.utilization"].event_ids == [ids["type"]]
        and "type argument at step 2" in ev["pref.1.utilization"].note
    )
    assert ev["pref.2.retrieval"].event_ids == [ids["answer"]] and ev["pref.2.retrieval"].text == "$70"
    assert ev["pref.2.utilization"].event_ids == [ids["reasoning"]]
    assert ev["location.retrieval"].event_ids == [ids["answer"]] and ev["location.retrieval"].text == "Los Angeles"
    assert ev["location.utilization"].event_ids == [ids["obs"]] and ev["location.utilization"].text == "90210"
    assert ev["intent"].event_ids == [ids["finish"]]


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ({"site_in_memory": False}, expect(web__retrieval=0)),
        ({"visit_site": False}, expect(web__utilization=0)),
        ({"size_in_memory": False}, expect(pref__1__retrieval=0)),
        # typing "slim chinos" applies none of the values its reasoning ("filtering to at most $70") states
        ({"type_size": False}, expect(pref__1__utilization=0, pref__2__utilization=0)),
        ({"budget_in_memory": False}, expect(pref__2__retrieval=0)),
        ({"budget_in_reasoning": False}, expect(pref__2__utilization=0)),
        ({"city_in_memory": False}, expect(location__retrieval=0)),
        ({"zip_in_url": False}, expect(location__utilization=0)),
        ({"end": "blocked", "answer": None}, expect(intent=5)),
        ({"end": "blocked", "answer": None, "visit_site": False}, expect(intent=0, web__utilization=0)),
        ({"end": "max_steps", "answer": None}, expect(intent=0)),
        ({"end": "answered", "answer": "  "}, expect(intent=0)),
        ({"end": "early_stop", "answer": "Trajectory failed"}, expect(intent=0)),
    ],
    ids=[
        "web-retrieval",
        "web-utilization",
        "pref1-retrieval",
        "pref1-utilization",
        "pref2-retrieval",
        "pref2-utilization",
        "location-retrieval",
        "location-utilization",
        "intent-blocked-on-site",
        "intent-blocked-off-site",
        "intent-max-steps",
        "intent-empty-answer",
        "intent-failure-end",
    ],
)
def test_each_rubric_line(flags: dict, expected: dict[str, float]) -> None:
    t, _ = episode(**flags)
    assert points(t) == expected


def test_an_answer_is_not_intent_when_the_query_asks_for_the_cart() -> None:
    # the case: the episode stops on a search-results page with an answer, the query says "add to the cart"
    t, ids = episode(query="Find me chinos and add the best pair to the cart")
    for judge in (RubricRulesJudge, ActionWiseRulesJudge, OutcomeBasedRulesJudge):
        verdict = judge(SETTINGS).score(t)
        assert verdict.points["intent"] == 0.0 and verdict.metrics["success"] == 0.0
        assert "an item in the cart was not reached" in verdict.evidence["intent"].note
    assert points(t) == expect(intent=0), "every other line is unchanged"
    assert points(episode()[0])["intent"] == 10.0, "the same episode answers an information query"


def test_withheld_points_say_what_was_searched() -> None:
    t, _ = episode(type_size=False)
    evidence = RubricRulesJudge(SETTINGS).score(t).evidence["pref.1.utilization"]
    assert evidence.event_ids == [] and "not found in" in evidence.note and "'32x32'" in evidence.note


def test_memory_answer_and_history_query_are_not_utilization() -> None:
    # the value is only in the memory answer and in the memory_access action: retrieved, never applied
    t, _ = episode(budget_in_reasoning=False)
    assert points(t)["pref.2.retrieval"] == 2.5 and points(t)["pref.2.utilization"] == 0.0


def test_location_counts_only_on_location_aware_sites() -> None:
    t, _ = episode(KOHLS)
    got = points(t)
    assert "location.retrieval" not in got and "location.utilization" not in got
    verdict = RubricRulesJudge(SETTINGS).score(t)
    assert sum(v for k, v in verdict.max_points.items() if k.startswith("pref.")) == 10.0
    t_aware, _ = episode(KOHLS)
    wider = PassSettings(plugins=(SiteSettings(location_sites=("kohls.com",)),))
    assert RubricRulesJudge(wider).score(t_aware).points["location.utilization"] == 2.5


def test_no_ground_truth_cannot_be_judged() -> None:
    b = EpisodeBuilder("run", "Alex_Garcia_A1")
    b.finish("answered", "x")
    with pytest.raises(JudgeError, match="no ground truth"):
        RubricRulesJudge(SETTINGS).score(b.trajectory())


def test_action_wise_rules_ignore_reasoning_and_history() -> None:
    t, _ = episode()
    got = points(t, ActionWiseRulesJudge)
    assert set(got) == {"web.utilization", "pref.1.utilization", "pref.2.utilization", "location.utilization", "intent"}
    assert got["pref.2.utilization"] == 0.0  # "$70" is only in the planner's reasoning
    assert got["pref.1.utilization"] == 2.5 and got["location.utilization"] == 2.5 and got["web.utilization"] == 5.0


def test_outcome_based_rules_see_only_the_end() -> None:
    t, _ = episode()
    got = points(t, OutcomeBasedRulesJudge)
    assert got["pref.1.utilization"] == 0.0  # typed at step 2, not in the final action
    assert got["web.utilization"] == 5.0  # the last page it was on is amazon's
    left, _ = episode(leave_site=True)
    assert points(left, OutcomeBasedRulesJudge)["web.utilization"] == 0.0
    assert points(left)["web.utilization"] == 5.0
    t2, _ = episode(answer="Slim chinos 32x32 for $65 from amazon", visit_site=True)
    got2 = points(t2, OutcomeBasedRulesJudge)
    assert got2["pref.1.utilization"] == 2.5 and got2["intent"] == 10.0


def test_metrics_are_normalized_and_success_is_by_rule() -> None:
    pts = {
        "web.retrieval": 5.0,
        "web.utilization": 5.0,
        "pref.1.retrieval": 2.5,
        "pref.1.utilization": 0.0,
        "intent": 10.0,
    }
    top = {
        "web.retrieval": 5.0,
        "web.utilization": 5.0,
        "pref.1.retrieval": 2.5,
        "pref.1.utilization": 2.5,
        "intent": 10.0,
    }
    assert rubric_metrics(pts, top) == {"p_web": 1.0, "p_pref": 0.5, "p_avg": 0.75, "intent": 1.0, "success": 0.0}
