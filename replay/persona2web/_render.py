"""Trajectories as text for an LLM judge, each line tagged ``[E<n>]`` so the judge can cite events.

Three views, one per judge family: the full trajectory with reasoning traces and history
(rubric), the actions of every step (action-wise baseline), and the final action with its
reasoning (outcome-based baseline). The tag -> event id map turns cited tags into evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from p2w_runtime.domain.trajectory import (
    ActionRecord,
    HistoryAccess,
    ObservationRecord,
    RationaleRecord,
    RetrievalRecord,
    Trajectory,
)

MAX_TEXT = 1500
"""Characters kept of one reasoning text or page description; a judge needs the gist, not the page."""


def _cut(text: str | None, limit: int = MAX_TEXT) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _step(step: int | None) -> str:
    return f"step {step}" if step is not None else "step ?"


@dataclass(slots=True)
class Rendered:
    lines: list[str] = field(default_factory=list)
    refs: dict[str, str] = field(default_factory=dict)

    def add(self, event_id: str, text: str) -> None:
        tag = f"E{len(self.refs) + 1}"
        self.refs[tag] = event_id
        self.lines.append(f"[{tag}] {text}")

    @property
    def text(self) -> str:
        return "\n".join(self.lines) if self.lines else "(no events)"


def _action_line(a: ActionRecord) -> str:
    shown = a.parsed.render() if a.parsed else a.raw
    error = f" — error: {_cut(a.error, 200)}" if a.error else ""
    return f"{_step(a.step)} action ({a.status}): {_cut(shown, 500)}{error}"


def _observation_line(o: ObservationRecord) -> str:
    title = f' "{_cut(o.title, 120)}"' if o.title else ""
    description = f" — {_cut(o.description, 400)}" if o.description else ""
    return f"{_step(o.step)} page: {o.url}{title}{description}"


def _retrieval_line(r: RetrievalRecord) -> str:
    if not r.hits:
        return f"{_step(r.step)} history retrieval for {r.query!r}: no entry above the threshold"
    hits = "; ".join(
        f"#{h.entry_id} (rank {h.rank}) {_cut(h.entry.key_text(), 200)}"
        + (f" [{h.entry.website}]" if h.entry.website else "")
        for h in r.hits
    )
    return f"{_step(r.step)} history retrieval for {r.query!r}: {hits}"


def _end(t: Trajectory, out: Rendered) -> None:
    if t.finished_event_id:
        answer = f"; answer: {_cut(t.answer, 800)!r}" if t.answer else "; no answer"
        detail = f" ({_cut(t.end_detail, 200)})" if t.end_detail else ""
        out.add(t.finished_event_id, f"episode end: {t.end_reason}{detail}{answer}; final URL: {t.last_url or '?'}")


def render_full(t: Trajectory) -> Rendered:
    """Everything the agent saw, asked, retrieved, reasoned and did, in event order."""
    out = Rendered()
    for item in t.timeline:
        if isinstance(item, ObservationRecord):
            out.add(item.event_id, _observation_line(item))
        elif isinstance(item, HistoryAccess) and item.query_event_id:
            why = f" — why: {_cut(item.reason, 300)}" if item.reason else ""
            out.add(item.query_event_id, f"{_step(item.step)} history query ({item.phase}): {item.query!r}{why}")
        elif isinstance(item, RetrievalRecord):
            out.add(item.event_id, _retrieval_line(item))
        elif isinstance(item, RationaleRecord):
            who = "planner reasoning" if item.source == "planner" else "memory answer (generator)"
            out.add(item.event_id, f"{_step(item.step)} {who}: {_cut(item.text)}")
        elif isinstance(item, ActionRecord):
            out.add(item.event_id, _action_line(item))
    _end(t, out)
    return out


def render_actions(t: Trajectory) -> Rendered:
    """The action of every step with the page it was taken on; no history, no reasoning."""
    out = Rendered()
    pages = {o.step: o.url for o in t.observations}
    for action in t.actions:
        on = f" on {pages[action.step]}" if action.step in pages else ""
        out.add(action.event_id, _action_line(action) + on)
    _end(t, out)
    return out


def render_outcome(t: Trajectory) -> Rendered:
    """Only the final action and the reasoning given for it, and where the episode ended."""
    out = Rendered()
    final = t.final_action
    if final is not None:
        for rationale in t.rationales_at(final.step):
            out.add(
                rationale.event_id, f"{_step(rationale.step)} reasoning for the final action: {_cut(rationale.text)}"
            )
        out.add(final.event_id, _action_line(final))
    _end(t, out)
    return out
