"""Intent as Persona2Web's appendix E.3 scores it: 10 goal achieved, 5 decisive action blocked, 0 otherwise.

The goal comes from the query (``_goal.py``). For a goal that is a state of the site (cart, reservation
details, checkout) the evidence is the page the episode reached and the action that led there: the element it
pressed, named from that step's recorded AX tree, or, in imported runs without page content, the action text and
the reasoning given for it. For an information goal it is the answer. Every verdict says what it was decided from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from p2w_rt.replay.judges import Scorecard
from p2w_rt.replay.matching import on_site
from p2w_rt.replay.persona2web._choice import ChoiceCheck, check_choice
from p2w_rt.replay.persona2web._goal import (
    Goal,
    cart_holds,
    decisive_words,
    empty_cart,
    external_block,
    gave_up,
    goal_of,
    is_decisive_name,
    is_goal_page,
    unavailable,
)
from p2w_rt.replay.persona2web._items import item_problem, price_ceilings, wanted_sizes
from p2w_rt.replay.persona2web._pages import PRESSING, RecordedPages, element
from p2w_rt.replay.persona2web._targets import INTENT_POINTS, RubricTargets
from p2w_rt.schemas import FAILURE_END_REASONS, Evidence
from p2w_runtime.domain.trajectory import ActionRecord, Trajectory

View = Literal["full", "actions", "outcome"]
"""What a judge may read: everything (rubric), actions and pages without reasoning, or only the end."""

_WHAT = {"cart": "an item in the cart", "reservation": "the reservation details page", "checkout": "the checkout page"}


@dataclass(frozen=True, slots=True)
class Page:
    """A page the agent was on: ``step`` is the step whose observation it is (the final state: after the last)."""

    step: int
    event_id: str
    url: str
    title: str
    ax_tree: str | None


@dataclass(frozen=True, slots=True)
class Decisive:
    """The action that attempted the goal, and how that was told (element, URL or words)."""

    action: ActionRecord
    how: str


class _Episode:
    """One trajectory as the intent rule reads it through a judge's view: its pages in order, its page actions."""

    def __init__(self, t: Trajectory, goal: Goal, pages: RecordedPages, view: View) -> None:
        self.t, self.goal, self.recorded, self.view = t, goal, pages, view
        self.pages = [Page(o.step, o.event_id, o.url, o.title, o.ax_tree) for o in t.observations]
        last = max((a.step for a in t.actions), default=0)
        if t.final_state is not None:
            f = t.final_state
            self.pages.append(Page(last + 1, f.event_id, f.url, f.title, f.ax_tree))
        elif t.final_url and t.finished_event_id:
            self.pages.append(Page(last + 1, t.finished_event_id, t.final_url, "", None))
        self.skipped = [a for a in t.actions if a.not_carried_out]
        """Actions the runner logged but never executed: no attempt, no refusal, said in the note."""
        self.browser = [
            a
            for a in t.actions
            if a.is_browser_action and a.name != "stop" and a.status != "invalid" and not a.not_carried_out
        ]
        if view == "outcome":
            self.pages = self.pages[-1:]
            self.browser = self.browser[-1:]
        self.ax_by_step = {o.step: o.ax_tree for o in t.observations if o.ax_tree}
        blocked = t.end_reason == "blocked" and t.observations
        self.blocked_at = t.observations[-1].step if blocked else None
        """The step of the page that blocked the episode: it and the final state after it show no success."""
        self.query = re.sub(r"^\s*Query:\s*", "", t.query).strip() or "\x00"
        """The task text, removed from reasoning before it is read: a plan quoting the task is no attempt."""

    def text(self, page: Page) -> str | None:
        return self.recorded.text(page.ax_tree)

    def decisive(self, a: ActionRecord) -> Decisive | None:
        """Whether ``a`` attempted the goal: the element it pressed, the URL it opened, or the words for it."""
        kind, parsed = self.goal.kind, a.parsed
        if parsed is None:
            return None
        if parsed.name == "goto" and parsed.args and is_goal_page(kind, parsed.args[0]):
            return Decisive(a, f"goto {parsed.args[0]}")
        if parsed.name not in PRESSING:
            return None
        tree = self.recorded.text(self.ax_by_step.get(a.step))
        if parsed.args and tree is not None:
            node = element(tree, parsed.args[0])
            if node is None:
                return None
            if is_decisive_name(kind, node.name) or (node.url and is_goal_page(kind, node.url)):
                return Decisive(a, f"{parsed.name} on {node.describe()} (AX tree of step {a.step})")
            return None
        words = decisive_words(kind, a.raw)
        if words:
            return Decisive(a, f"{a.raw!r} at step {a.step}")
        if self.view != "actions":
            for r in self.t.rationales_at(a.step):
                words = decisive_words(kind, r.text.replace(self.query, " "))
                if words:
                    return Decisive(a, f"{parsed.render()} at step {a.step}, reasoned as '{words}'")
        return None

    def before(self, page: Page) -> list[ActionRecord]:
        return [a for a in self.browser if a.step < page.step]

    def last_decisive(self, page: Page) -> Decisive | None:
        for a in reversed(self.before(page)):
            found = self.decisive(a)
            if found is not None:
                return found
        return None


def _award(verdict: Scorecard, points: float, ids: list[str], note: str, text: str = "") -> None:
    verdict.award("intent", points, INTENT_POINTS, Evidence(event_ids=[i for i in ids if i], text=text, note=note))


def _information(verdict: Scorecard, t: Trajectory, reached_site: bool) -> None:
    ids = [t.finished_event_id or ""]
    answer = (t.answer or "").strip()
    reason = t.end_reason or "unfinished"
    if t.end_reason == "blocked" and reached_site and external_block(t.end_detail):
        note = "information goal; blocked by the site after reaching it" + (f": {t.end_detail}" if t.end_detail else "")
        _award(verdict, INTENT_POINTS / 2, ids, note, answer)
    elif t.end_reason and t.end_reason not in FAILURE_END_REASONS and answer:
        failed = gave_up(answer)
        if failed:
            _award(verdict, 0.0, ids, f"information goal; the answer says the search failed ('{failed}')", answer)
        else:
            _award(verdict, INTENT_POINTS, ids, f"information goal; decided from the answer (ended '{reason}')", answer)
    else:
        why = "no answer" if not answer else f"end reason '{reason}'"
        _award(verdict, 0.0, ids, f"information goal; ended '{reason}': {why}", answer)


def _source(e: _Episode) -> str:
    """What page content the decision could read, for the evidence note."""
    if e.recorded.texts:
        return "recorded AX trees"
    return "URLs, titles and action text; no page content recorded"


def intent_points(
    verdict: Scorecard, t: Trajectory, targets: RubricTargets, pages: RecordedPages, view: View, reached_site: bool
) -> None:
    """Award ``intent`` (0 / 5 / 10) with the evidence it was decided from."""
    goal = goal_of(t.query)
    if not goal.acts:
        _information(verdict, t, reached_site)
        return
    e = _Episode(t, goal, pages, view)
    _decide(verdict, e, targets)
    if e.skipped and "intent" in verdict.evidence:
        evidence = verdict.evidence["intent"]
        skipped = "; ".join(f"step {a.step} ({a.raw!r}) {a.error}" for a in e.skipped)
        verdict.evidence["intent"] = evidence.model_copy(update={"note": f"{evidence.note}; not counted: {skipped}"})


def _decide(verdict: Scorecard, e: _Episode, targets: RubricTargets) -> None:
    goal, t = e.goal, e.t
    refused = next((a for a in e.browser if a.status == "blocked"), None)
    if refused is not None:
        note = (
            f"{goal.kind} goal; constraint violated: the agent pressed a final confirmation at step {refused.step}, "
            f"refused by the browser ({refused.error or 'blocked'})"
        )
        _award(verdict, 0.0, [refused.event_id], note, refused.raw)
        return
    if _achieved(verdict, e, targets):
        return
    if _blocked(verdict, e, targets):
        return
    tried = [d for d in map(e.decisive, e.browser) if d is not None]
    did = f"; last attempt: {tried[-1].how}" if tried else "; no decisive action found"
    what = _WHAT[goal.kind]
    note = f"{goal.kind} goal ('{goal.phrase}'); {what} was not reached in {len(e.pages)} pages{did} ({_source(e)})"
    _award(verdict, 0.0, [tried[-1].action.event_id] if tried else [t.finished_event_id or ""], note)


def _shown(e: _Episode, page: Page) -> tuple[str, Decisive | None] | None:
    """How ``page`` shows the goal reached (and the action that did it), or None."""
    if e.blocked_at is not None and page.step >= e.blocked_at:
        return None
    kind, text = e.goal.kind, e.text(page)
    decisive = e.last_decisive(page)
    if is_goal_page(kind, page.url, page.title):
        if kind == "cart" and text is not None and empty_cart(text):
            return None
        if kind == "cart" and text is None and decisive is None:
            return None  # a cart URL alone, its contents unknown, and nothing was added: not evidence
        seen = "AX tree recorded" if text is not None else "no page content recorded"
        return f"the page reached, {page.url} ({seen})", decisive
    holds = cart_holds(text) if kind == "cart" and text is not None and decisive is not None else None
    if holds:
        return f"the page after it, {page.url}, showing '{holds}'", decisive
    return None


def _unconfirmed(e: _Episode) -> tuple[Page, str, Decisive] | None:
    """An imported cart episode: the add recorded as an action, no page content to confirm or refute it."""
    if e.goal.kind != "cart" or e.recorded.texts or e.t.end_reason in FAILURE_END_REASONS or not e.pages:
        return None
    decisive = e.last_decisive(e.pages[-1]) or next((d for d in map(e.decisive, e.browser[-1:]) if d is not None), None)
    if decisive is None:
        return None
    page = next((p for p in reversed(e.pages) if p.step <= decisive.action.step), e.pages[-1])
    return page, "no page content recorded to confirm it", decisive


def _achieved(verdict: Scorecard, e: _Episode, targets: RubricTargets) -> bool:
    """Award 10 (or 0 for a wrong site / item) when a page shows the goal reached; False if none does."""
    kind = e.goal.kind
    found: tuple[Page, str, Decisive | None] | None = None
    for page in e.pages:
        shown = _shown(e, page)
        if shown is not None:
            found = (page, *shown)
            break
    found = found or _unconfirmed(e)
    if found is None:
        return False
    page, seen, decisive = found
    how = f"decided from {decisive.how} and {seen}" if decisive else f"decided from {seen}"
    ids = [decisive.action.event_id if decisive else "", page.event_id]
    if not on_site(page.url, targets.hosts):
        note = f"{kind} goal; wrong site: {page.url} is not on {' / '.join(targets.websites)}; {how}"
        _award(verdict, 0.0, ids, note, page.url)
        return True
    text = e.text(page)
    problem = item_problem(e.goal, targets, text) if text is not None else None
    if problem is not None:
        _award(verdict, 0.0, ids, f"{kind} goal; constraint violated: {problem}; {how}", page.url)
        return True
    choice = _choice(e, decisive, targets)
    if choice is not None and choice.problem is not None:
        _award(verdict, 0.0, ids, f"{kind} goal; {choice.problem}; {how}", page.url)
        return True
    ended = f" (episode ended '{e.t.end_reason}')" if e.t.end_reason in FAILURE_END_REASONS else ""
    chosen = f"; {choice.note}" if choice is not None else ""
    _award(verdict, INTENT_POINTS, ids, f"{kind} goal achieved; {how}{ended}{chosen}", page.url)
    return True


def _choice(e: _Episode, decisive: Decisive | None, targets: RubricTargets) -> ChoiceCheck | None:
    """The item the decisive action acted on, against the superlative of the query (None if it names none)."""
    want = e.goal.best
    if want is None:
        return None
    if not e.recorded.texts:
        return ChoiceCheck(f"'{want.phrase}' not checked: no page content recorded, so no results page to compare")
    at = next((p for p in e.pages if decisive is not None and p.step == decisive.action.step), None)
    if decisive is None or at is None:
        return ChoiceCheck(f"'{want.phrase}' not checked: the page of the decisive action is not in this view")
    pages = [(p.step, p.url, text) for p in e.pages if p.step < at.step and (text := e.text(p)) is not None]
    ceilings = [amount for _, amount, _ in price_ceilings(targets.preferences)]
    return check_choice(want, at.url, pages, ceilings, wanted_sizes(targets.preferences))


def _blocked(verdict: Scorecard, e: _Episode, targets: RubricTargets) -> bool:
    """Award 5 when the decisive action was attempted on the site and an external factor stopped it."""
    t, kind = e.t, e.goal.kind
    if not e.pages:
        return False
    last = e.pages[-1]
    cause = e.before(last)[-1:] if e.pages else []
    if t.end_reason == "blocked" and external_block(t.end_detail) and cause:
        attempt = e.decisive(cause[0])
        if attempt is None and is_goal_page(kind, last.url, last.title):
            attempt = Decisive(cause[0], f"{cause[0].raw!r} at step {cause[0].step}, which opened {last.url}")
        if attempt is not None and on_site(last.url, targets.hosts):
            note = f"{kind} goal; blocked after the decisive action: {attempt.how}; then {t.end_detail or 'blocked'}"
            _award(verdict, INTENT_POINTS / 2, [attempt.action.event_id, last.event_id], note, last.url)
            return True
    for page in e.pages:
        text = e.text(page)
        words = unavailable(text) if text else None
        attempt = e.last_decisive(page) if words else None
        if attempt is not None and on_site(page.url, targets.hosts):
            note = f"{kind} goal; blocked after the decisive action: {attempt.how}; the next page says '{words}'"
            _award(verdict, INTENT_POINTS / 2, [attempt.action.event_id, page.event_id], note, page.url)
            return True
    words = unavailable(t.answer or "")
    attempt = e.last_decisive(last) if words else None
    if attempt is not None and on_site(_attempt_page(e, attempt), targets.hosts):
        note = f"{kind} goal; blocked after the decisive action: {attempt.how}; the answer says '{words}'"
        _award(verdict, INTENT_POINTS / 2, [attempt.action.event_id, t.finished_event_id or ""], note, t.answer or "")
        return True
    return False


def _attempt_page(e: _Episode, attempt: Decisive) -> str:
    """The URL of the page the attempt was made on."""
    return next((p.url for p in e.pages if p.step == attempt.action.step), e.pages[-1].url if e.pages else "")
