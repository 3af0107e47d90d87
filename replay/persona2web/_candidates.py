"""The texts of a trajectory a rules judge searches, each with the event it came from.

Memory texts (what the history returned) serve retrieval points; applied texts (what the
agent did with it) serve utilization points. A memory answer is never an applied text:
retrieving a value is not applying it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple
from urllib.parse import unquote_plus

from p2w_rt.replay.matching import find_value
from p2w_runtime.domain.trajectory import ActionRecord, Trajectory

TEXT_ARGS: dict[str, slice] = {
    "type": slice(1, 2),
    "goto": slice(0, 1),
    "stop": slice(0, 1),
    "search": slice(0, None),
    "select_option": slice(1, None),
}
"""Which arguments of an action carry text the agent chose (element ids, keys and directions do not)."""
IGNORED_ACTIONS = frozenset(
    {"memory_access", "note", "click", "hover", "press", "scroll", "tab_focus", "branch", "prune"}
)


class Candidate(NamedTuple):
    """A text to search, the event it came from, and where in the trajectory it sits (for the evidence note).

    ``where`` is formatted only for the candidate that ends up as evidence: most are never shown.
    """

    event_id: str
    text: str
    place: str
    details: tuple[object, ...] = ()

    @property
    def where(self) -> str:
        return self.place.format(*self.details)


def _decoded(url: str) -> str:
    """A URL with its query string decoded (``q=chinos+32x32`` reads ``chinos 32x32``)."""
    return unquote_plus(url) if "%" in url or "+" in url else url


def memory_candidates(t: Trajectory) -> Iterator[Candidate]:
    """Every retrieved entry and memory answer, in the order the agent got them."""
    for access in t.history:
        for retrieval in access.retrievals:
            for hit in retrieval.hits:
                entry = hit.entry
                text = f"{entry.key_text()} ({entry.website})" if entry.website else entry.key_text()
                yield Candidate(retrieval.event_id, text, "retrieved entry #{} (rank {})", (hit.entry_id, hit.rank))
        for answer in access.answers:
            yield Candidate(answer.event_id, answer.text, "memory answer")


def action_texts(action: ActionRecord) -> Iterator[Candidate]:
    parsed = action.parsed
    if parsed is None or parsed.name in IGNORED_ACTIONS:
        return
    args = parsed.args[TEXT_ARGS.get(parsed.name, slice(0, None))]
    for arg in args:
        if not arg or (arg.isdigit() and parsed.name != "type"):  # a typed number is text (a ZIP), not an element id
            continue
        text = _decoded(arg) if parsed.name == "goto" else arg
        yield Candidate(action.event_id, text, "{} argument at step {}", (parsed.name, action.step))


def _page_urls(t: Trajectory, urls: list[tuple[str, str]]) -> Iterator[Candidate]:
    """Page URLs the agent brought about (filters and searches live in query strings); the start URL is given."""
    for event_id, url in urls:
        if url and url != t.start_url:
            yield Candidate(event_id, _decoded(url), "page URL")


def _answer(t: Trajectory) -> Iterator[Candidate]:
    if t.answer and t.finished_event_id:
        yield Candidate(t.finished_event_id, t.answer, "final answer")


def reasoned_steps(t: Trajectory, values: Sequence[str]) -> set[int]:
    """Steps whose planner reasoning counts as applying a value: those whose action acts on the plan it states.

    Persona2Web's rubric credits a value "applied in the agent's reasoning or actions ... stated as a constraint it
    acts on". What the agent applied decides. A step whose action carries text (typed, searched, selected, a URL
    opened) acts on its plan when that text, or the page it led to, applies at least one expected value (``values``:
    the preferences and the location); one applying none contradicts the plan it states (the plan lists "34x30, 4
    stars and up, below $50", the action is ``goto .../search?q=slim+chinos``), and its reasoning earns nothing. A
    press (``click``, ``press``), a scroll, going back or ``stop`` carry no text to contradict it: there the wording
    is the evidence.
    """
    next_url = {o.step - 1: o.url for o in t.observations}
    reasoned = set()
    for a in t.actions:
        if not a.is_browser_action:
            continue
        if a.name in TEXT_ARGS and a.name != "stop":
            texts = [c.text for c in action_texts(a)] + [_decoded(next_url.get(a.step, ""))]
            if not any(find_value(v, text, bounded=True) for v in values for text in texts):
                continue
        reasoned.add(a.step)
    return reasoned


def applied_candidates(t: Trajectory, values: Sequence[str]) -> Iterator[Candidate]:
    """Full view (rubric): action arguments, page URLs, the planner reasoning of ``reasoned_steps``, the answer."""
    reasoned = reasoned_steps(t, values)
    for action in t.actions:
        yield from action_texts(action)
    yield from _page_urls(t, t.urls)
    for rationale in t.planner_rationales:
        if rationale.step in reasoned:
            yield Candidate(rationale.event_id, rationale.text, "planner reasoning at step {}", (rationale.step,))
    yield from _answer(t)


def action_view_candidates(t: Trajectory) -> Iterator[Candidate]:
    """Action-wise view: the actions of every step and the pages they led to, no reasoning, no history."""
    for action in t.actions:
        yield from action_texts(action)
    yield from _page_urls(t, t.urls)
    yield from _answer(t)


def outcome_view_candidates(t: Trajectory, values: Sequence[str]) -> Iterator[Candidate]:
    """Outcome view: the final action, its reasoning (as ``reasoned_steps``), the final page, the answer."""
    final = t.final_action
    if final is not None:
        yield from action_texts(final)
        for rationale in t.rationales_at(final.step) if final.step in reasoned_steps(t, values) else ():
            yield Candidate(
                rationale.event_id, rationale.text, "reasoning for the final action (step {})", (final.step,)
            )
    last = t.urls[-1:] if t.urls else []
    yield from _page_urls(t, last)
    yield from _answer(t)
