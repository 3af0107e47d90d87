"""The texts of a trajectory the rules read, each with its event and its place in the episode.

Three kinds: what the history gave the agent (retrieved entries, memory answers), what the
agent did (action arguments, page URLs it brought about, planner reasoning, final answer),
and where it went (page URLs). ``order`` is the event's index in the episode, so a rule can
ask whether something happened after a retrieval.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote_plus

from p2w_runtime.domain.trajectory import ActionRecord, HistoryAccess, RetrievedEntry, Trajectory

ACTION_TEXT_ARGS: dict[str, slice] = {
    "type": slice(1, 2),
    "search": slice(0, None),
    "select_option": slice(1, None),
    "goto": slice(0, 1),
    "stop": slice(0, 1),
}
"""Arguments that carry text the agent chose; element ids, keys, notes and history queries do not apply a value."""

SEARCH_ACTIONS = frozenset({"type", "search", "select_option"})
"""Actions whose text is a search or filter criterion."""


@dataclass(frozen=True, slots=True)
class Text:
    event_id: str
    text: str
    where: str
    order: int


def event_order(t: Trajectory) -> dict[str, int]:
    """Event id -> index in the episode; the end of the episode sorts after everything else."""
    order: dict[str, int] = {}
    for i, item in enumerate(t.timeline):
        event_id = item.query_event_id if isinstance(item, HistoryAccess) else item.event_id
        if event_id:
            order[event_id] = i
    end = len(t.timeline)
    for event_id in (t.final_state.event_id if t.final_state else None, t.finished_event_id):
        if event_id:
            order[event_id] = end
    return order


def entry_text(entry: RetrievedEntry) -> str:
    """A retrieved entry as the rules search it: its key text, with its website when it has one."""
    return f"{entry.key_text()} ({entry.website})" if entry.website else entry.key_text()


def memory_texts(t: Trajectory, order: dict[str, int]) -> list[Text]:
    """Every retrieved entry (with its website) and memory answer, in the order the agent got them."""
    found: list[Text] = []
    for access in t.history:
        for retrieval in access.retrievals:
            for hit in retrieval.hits:
                text = entry_text(hit.entry)
                where = f"retrieved entry #{hit.entry_id} (rank {hit.rank})"
                found.append(Text(retrieval.event_id, text, where, order.get(retrieval.event_id, 0)))
        for answer in access.answers:
            found.append(Text(answer.event_id, answer.text, "memory answer", order.get(answer.event_id, 0)))
    return sorted(found, key=lambda x: x.order)


def action_args(action: ActionRecord, order: dict[str, int]) -> list[Text]:
    parsed = action.parsed
    if parsed is None or parsed.name not in ACTION_TEXT_ARGS:
        return []
    found = []
    for arg in parsed.args[ACTION_TEXT_ARGS[parsed.name]]:
        if arg and not arg.isdigit():
            text = unquote_plus(arg) if parsed.name == "goto" else arg
            where = f"{parsed.name} argument at step {action.step}"
            found.append(Text(action.event_id, text, where, order.get(action.event_id, 0)))
    return found


def page_urls(t: Trajectory, order: dict[str, int]) -> list[Text]:
    """Pages the agent was on, final page included, the start page too (it is where the agent was)."""
    return [Text(event_id, url, "page URL", order.get(event_id, 0)) for event_id, url in t.urls if url]


def applied_texts(t: Trajectory, order: dict[str, int], reasoned: set[int]) -> list[Text]:
    """Where a value counts as applied: action arguments, URLs the agent brought about, the planner reasoning of the
    ``reasoned`` steps (``replay.persona2web.reasoned_steps``: a step whose action acts on the plan it states),
    answer."""
    found = [text for action in t.actions for text in action_args(action, order)]
    found += [
        Text(u.event_id, unquote_plus(u.text), u.where, u.order) for u in page_urls(t, order) if u.text != t.start_url
    ]
    found += [
        Text(r.event_id, r.text, f"planner reasoning at step {r.step}", order.get(r.event_id, 0))
        for r in t.planner_rationales
        if r.step in reasoned
    ]
    if t.answer and t.finished_event_id:
        found.append(Text(t.finished_event_id, t.answer, "final answer", order.get(t.finished_event_id, 0)))
    return sorted(found, key=lambda x: x.order)


def query_text(t: Trajectory) -> Text:
    return Text(t.started_event_id, t.query, "the user's query", -1)
