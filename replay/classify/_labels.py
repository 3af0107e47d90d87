"""The error labels of Persona2Web's error analysis, with the definitions both classifiers follow.

The definitions are written once: the rules implement them, and the LLM classifier's prompt
quotes them, so a change here changes both (and the prompt hash invalidates cached LLM labels).
"""

from __future__ import annotations

REDUNDANT_HISTORY_ACCESS = "redundant_history_access"
PERSONALIZATION_HALLUCINATION = "personalization_hallucination"
HISTORY_RETRIEVAL_FAILURE = "history_retrieval_failure"
HISTORY_UTILIZATION_FAILURE = "history_utilization_failure"

PERSONALIZATION_LABELS: tuple[str, ...] = (
    REDUNDANT_HISTORY_ACCESS,
    PERSONALIZATION_HALLUCINATION,
    HISTORY_RETRIEVAL_FAILURE,
    HISTORY_UTILIZATION_FAILURE,
)

NAVIGATION_LABELS: tuple[str, ...] = (
    "max_steps",
    "repeated_action",
    "parse_failures",
    "blocked",
    "error",
    "early_stop",
    "no_answer",
)
"""End reasons that are navigation failures, each its own label. ``answered`` is not a failure and
``aborted`` is the user stopping the run, not the agent failing."""

ALL_LABELS: tuple[str, ...] = PERSONALIZATION_LABELS + NAVIGATION_LABELS

DEFINITIONS: dict[str, str] = {
    REDUNDANT_HISTORY_ACCESS: (
        "underspecified history queries that retrieve nothing useful and are repeated: several queries with no "
        "history entry above the retrieval threshold, or near-duplicate queries in one episode."
    ),
    PERSONALIZATION_HALLUCINATION: (
        "the agent applies a user preference (a rating threshold, price bound, size, brand, location) that appears "
        "neither in any retrieved history entry or memory answer nor in the user's query. A preference is a "
        'constraint the agent attributes to the user ("the user prefers", "my usual") or uses as a filter or '
        "search criterion (typed text, URL query parameters such as size=, max_price=, min_rating=); product facts "
        "it merely reports (a listed price, a shown rating) are not preferences."
    ),
    HISTORY_RETRIEVAL_FAILURE: (
        "a ground-truth value the query does not state (the expected website, a preference value, the location) "
        "never appears in what was retrieved (history entries and memory answers)."
    ),
    HISTORY_UTILIZATION_FAILURE: (
        "a ground-truth value was retrieved, but no later action (typed text, URL, answer) or reasoning applies it; "
        "for the website: the agent never went to it after retrieving it."
    ),
}
