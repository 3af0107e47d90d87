"""The rules classifier on hand-built trajectories: each shows one error type (or none), with its evidence."""

from __future__ import annotations

from p2w_rt.replay.classify import RulesClassifier
from p2w_rt.replay.derived import PassSettings
from p2w_rt.replay.persona2web import SiteSettings
from p2w_rt.schemas import ErrorLabel
from p2w_runtime.testing.episodes import EpisodeBuilder
from tests.helpers.classify_builders import (
    KOHLS_L0,
    RATING,
    SIZE,
    SIZE_ANSWER,
    act_well,
    ask,
    ask_well,
    builder,
    good_episode,
)

SETTINGS = PassSettings(plugins=(SiteSettings(location_sites=("amazon.com", "instacart.com")),))


def labels(b: EpisodeBuilder, settings: PassSettings = SETTINGS) -> dict[str, ErrorLabel]:
    verdict = RulesClassifier(settings).label(b.trajectory())
    assert verdict.status == "ok"
    found = {label.label: label for label in verdict.labels}
    assert len(found) == len(verdict.labels), "a label appears at most once per episode"
    for label in verdict.labels:
        assert label.explanation and "\n" not in label.explanation, "one-line explanation"
    return found


def test_a_clean_episode_gets_no_label() -> None:
    assert labels(good_episode()) == {}


def test_a_fully_explicit_query_needs_no_history() -> None:
    b = builder(query=KOHLS_L0, level=0)
    act_well(b)
    assert labels(b) == {}


# --- redundant history access --------------------------------------------------------------------
def test_repeated_queries_that_retrieve_nothing_are_redundant() -> None:
    b = builder()
    q1, _ = ask(b, "user preferences", [], "No relevant memories found.")
    q2, _ = ask(b, "what does the user usually like", [], "No relevant memories found.")
    ask_well(b)
    act_well(b)
    found = labels(b)
    assert set(found) == {"redundant_history_access"}
    label = found["redundant_history_access"]
    assert label.evidence.event_ids == [q1, q2]
    assert "2 of 4 history queries retrieved no entry" in label.explanation
    assert "user preferences" in label.evidence.text


def test_a_near_duplicate_query_is_redundant_even_with_hits() -> None:
    b = builder()
    ids = ask_well(b)
    again, _ = ask(b, "Which chino size does the user buy?", [SIZE], SIZE_ANSWER, first_id=10)
    act_well(b)
    found = labels(b)
    assert set(found) == {"redundant_history_access"}
    assert found["redundant_history_access"].evidence.event_ids == [ids["size_q"], again]
    assert "repeats" in found["redundant_history_access"].explanation


def test_one_empty_query_among_useful_ones_is_not_redundant() -> None:
    b = builder()
    ask(b, "user's favourite colour", [], "No relevant memories found.")
    ask_well(b)
    act_well(b)
    assert labels(b) == {}


# --- personalization hallucination ---------------------------------------------------------------
def test_a_filter_parameter_found_nowhere_is_hallucinated() -> None:
    b = builder()
    ask_well(b)
    ids = act_well(b, extra_param="&max_price=40&page_size=24&sort=price_asc")  # paging and order are no filter
    found = labels(b)
    assert set(found) == {"personalization_hallucination"}
    label = found["personalization_hallucination"]
    assert label.evidence.event_ids == [ids["results"]]
    assert label.evidence.text == "max_price=40"
    assert "max_price=40" in label.explanation


def test_a_typed_size_that_was_never_retrieved_is_hallucinated() -> None:
    b = builder()
    ask_well(b)
    ids = act_well(b, size="34x30")
    found = labels(b)
    # the retrieved 32x32 goes unused too: the agent replaced it with a size of its own
    assert set(found) == {"personalization_hallucination", "history_utilization_failure"}
    hallucinated = found["personalization_hallucination"]
    assert ids["type"] in hallucinated.evidence.event_ids
    assert "34x30" in hallucinated.evidence.text
    assert "34x30" not in found["history_utilization_failure"].evidence.text


def test_a_preference_attributed_to_the_user_must_be_grounded() -> None:
    b = builder()
    ask_well(b)
    reasoning = b.planner(2, "The user prefers Dockers, so search that brand first.")
    act_well(b)
    found = labels(b)
    assert set(found) == {"personalization_hallucination"}
    label = found["personalization_hallucination"]
    assert label.evidence.event_ids == [reasoning]
    assert "Dockers" in label.evidence.text
    assert "Dockers" in label.evidence.note


def test_a_grounded_attribution_is_not_hallucinated() -> None:
    b = builder()
    ask_well(b)
    b.planner(2, "The user's usual size is 32x32 and the user prefers Kohl's.")
    act_well(b)
    assert labels(b) == {}


def test_reported_product_facts_are_not_preferences() -> None:
    b = builder()
    ask_well(b)
    b.observation(5, "https://www.kohls.com/search.jsp?search=sonoma", "Sonoma Flexwear 720 chinos")
    b.planner(5, "Dockers chinos cost $45 and are rated 3.9 stars; the Sonoma pair is $39.99.")
    b.action(5, "note", "Dockers $45, 3.9 stars; Sonoma $39.99")
    b.action(5, "type", "5", "sonoma flexwear 720 chinos", "1")
    act_well(b)
    assert labels(b) == {}


def test_a_typed_number_not_seen_anywhere_is_hallucinated() -> None:
    b = builder()
    ask_well(b)
    typed = b.action(0, "type", "7", "slim fit chinos under $40", "1")  # before step 1 observes its page
    act_well(b)
    found = labels(b)
    assert set(found) == {"personalization_hallucination"}
    assert found["personalization_hallucination"].evidence.event_ids == [typed]
    assert found["personalization_hallucination"].evidence.note == "ungrounded values: 40"


# --- history retrieval failure -------------------------------------------------------------------
def test_a_preference_never_retrieved_is_a_retrieval_failure() -> None:
    b = builder()
    ids = ask_well(b, rating=False)
    act_well(b, rating=False)
    found = labels(b)
    assert set(found) == {"history_retrieval_failure"}
    label = found["history_retrieval_failure"]
    assert "preference 'visible ratings 4.2+ stars with 50+ reviews'" in label.explanation
    assert "32x32" not in label.explanation and "kohls.com" not in label.explanation
    assert label.evidence.event_ids == [ids["size_q"]]


def test_the_location_of_a_location_aware_site_must_be_retrieved() -> None:
    b = good_episode()
    found = labels(b, PassSettings(plugins=(SiteSettings(location_sites=("kohls.com",)),)))
    assert set(found) == {"history_retrieval_failure"}
    assert "location 'Los Angeles, CA 90210'" in found["history_retrieval_failure"].explanation
    assert labels(b, SETTINGS) == {}


def test_no_history_runs_are_not_blamed_for_not_retrieving() -> None:
    b = builder(scheme="no-history")
    act_well(b, size=None, rating=False)
    assert "history_retrieval_failure" not in labels(b)


def test_without_ground_truth_only_truth_free_labels_remain() -> None:
    b = builder(truth=None)
    ask(b, "user preferences", [], "nothing")
    ask(b, "user preferences please", [], "nothing")
    act_well(b, size=None, rating=False, end="max_steps")
    assert set(labels(b)) == {"redundant_history_access", "max_steps"}


# --- history utilization failure -----------------------------------------------------------------
def test_a_retrieved_value_never_applied_is_a_utilization_failure() -> None:
    b = builder()
    ids = ask_well(b)
    act_well(b, size=None)
    found = labels(b)
    assert set(found) == {"history_utilization_failure"}
    label = found["history_utilization_failure"]
    assert "preference '32x32'" in label.explanation and "rating" not in label.explanation
    assert label.evidence.event_ids == [ids["size_r"]]
    assert "32x32" in label.evidence.text


def test_a_value_used_only_before_it_was_retrieved_does_not_count() -> None:
    b = builder()
    b.observation(1, "https://www.kohls.com/search.jsp?search=chinos+32x32", "Results")
    ask_well(b)
    act_well(b, size=None)
    # grounded (the history holds it), but applied only before the agent knew it: not a use of the history
    assert set(labels(b)) == {"history_utilization_failure"}


def test_a_site_retrieved_but_never_visited_is_a_utilization_failure() -> None:
    b = builder()
    ask(b, "which chino size does the user buy", [SIZE], SIZE_ANSWER)
    ask(b, "what rating does the user require", [RATING], "4.2+ stars with 50+ reviews")
    b.observation(1, "https://www.target.com/s?searchTerm=chinos+32x32&rating=4.2", "Target")
    b.action(1, "type", "3", "chinos 32x32", "1")
    b.planner(1, "Pick a pair with 4.2+ stars and 50+ reviews.")
    b.action(2, "stop", "Goodfellow chinos 32x32 at target.com")
    b.finish("answered", "Goodfellow chinos 32x32 at target.com")
    found = labels(b)
    assert set(found) == {"history_utilization_failure"}
    assert "website kohls.com" in found["history_utilization_failure"].explanation


# --- navigation end reasons ----------------------------------------------------------------------
def test_a_failure_end_reason_is_its_own_label() -> None:
    b = builder()
    ask_well(b)
    ids = act_well(b, end="max_steps")
    found = labels(b)
    assert set(found) == {"max_steps"}
    assert found["max_steps"].evidence.event_ids == [ids["finished"]]
    assert "ended: max_steps" in found["max_steps"].explanation


def test_answered_and_aborted_are_not_navigation_errors() -> None:
    b = builder()
    ask_well(b)
    act_well(b, end="aborted")
    assert labels(b) == {}
