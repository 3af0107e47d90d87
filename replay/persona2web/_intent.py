"""Intent as Persona2Web's appendix E.3 scores it: 10 goal achieved, 5 decisive action blocked, 0 otherwise.

The goal comes from the query (``_goal.py``). For a goal that is a state of the site (cart, reservation
details, checkout) the evidence is the page the episode reached and the action that led there: the element it
pressed, named from that step's recorded AX tree, or, in imported runs without page content, the action text and
the reasoning given for it. For an information goal it is the answer. Every verdict says what it was decided from.
"""

from __future__ import annotations

from p2w_rt.replay.judges import Scorecard
from p2w_rt.replay.matching import on_site
from p2w_rt.replay.persona2web._choice import ChoiceCheck, check_choice
from p2w_rt.replay.persona2web._episode_view import Decisive, EpisodeView, Page, View
from p2w_rt.replay.persona2web._goal import (
    cart_holds,
    empty_cart,
    external_block,
    gave_up,
    goal_of,
    is_goal_page,
    unavailable,
)
from p2w_rt.replay.persona2web._items import item_problem, price_ceilings, wanted_sizes
from p2w_rt.replay.persona2web._pages import RecordedPages
from p2w_rt.replay.persona2web._targets import INTENT_POINTS, RubricTargets
from p2w_rt.schemas import FAILURE_END_REASONS, Evidence
from p2w_runtime.domain.trajectory import Trajectory

_WHAT = {"cart": "an item in the cart", "reservation": "the reservation details page", "checkout": "the checkout page"}


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


def _source(e: EpisodeView) -> str:
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
    e = EpisodeView(t, goal, pages, view)
    _decide(verdict, e, targets)
    if e.skipped and "intent" in verdict.evidence:
        evidence = verdict.evidence["intent"]
        skipped = "; ".join(f"step {a.step} ({a.raw!r}) {a.error}" for a in e.skipped)
        verdict.evidence["intent"] = evidence.model_copy(update={"note": f"{evidence.note}; not counted: {skipped}"})


def _decide(verdict: Scorecard, e: EpisodeView, targets: RubricTargets) -> None:
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


def _shown(e: EpisodeView, page: Page) -> tuple[str, Decisive | None] | None:
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


def _unconfirmed(e: EpisodeView) -> tuple[Page, str, Decisive] | None:
    """An imported cart episode: the add recorded as an action, no page content to confirm or refute it."""
    if e.goal.kind != "cart" or e.recorded.texts or e.t.end_reason in FAILURE_END_REASONS or not e.pages:
        return None
    decisive = e.last_decisive(e.pages[-1]) or next((d for d in map(e.decisive, e.browser[-1:]) if d is not None), None)
    if decisive is None:
        return None
    page = next((p for p in reversed(e.pages) if p.step <= decisive.action.step), e.pages[-1])
    return page, "no page content recorded to confirm it", decisive


def _achieved(verdict: Scorecard, e: EpisodeView, targets: RubricTargets) -> bool:
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


def _choice(e: EpisodeView, decisive: Decisive | None, targets: RubricTargets) -> ChoiceCheck | None:
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


def _blocked(verdict: Scorecard, e: EpisodeView, targets: RubricTargets) -> bool:
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
            return _stopped(verdict, e, attempt, f"then {t.end_detail or 'blocked'}", last.event_id, last.url)
    for page in e.pages:
        text = e.text(page)
        words = unavailable(text) if text else None
        attempt = e.last_decisive(page) if words else None
        if attempt is not None and on_site(page.url, targets.hosts):
            return _stopped(verdict, e, attempt, f"the next page says '{words}'", page.event_id, page.url)
    words = unavailable(t.answer or "")
    attempt = e.last_decisive(last) if words else None
    if attempt is not None and on_site(_attempt_page(e, attempt), targets.hosts):
        return _stopped(verdict, e, attempt, f"the answer says '{words}'", t.finished_event_id or "", t.answer or "")
    return False


def _stopped(verdict: Scorecard, e: EpisodeView, attempt: Decisive, then: str, seen_id: str, text: str) -> bool:
    """Award 5 for ``attempt``, stopped by what ``then`` says (seen at event ``seen_id``); True, as ``_blocked``."""
    note = f"{e.goal.kind} goal; blocked after the decisive action: {attempt.how}; {then}"
    _award(verdict, INTENT_POINTS / 2, [attempt.action.event_id, seen_id], note, text)
    return True


def _attempt_page(e: EpisodeView, attempt: Decisive) -> str:
    """The URL of the page the attempt was made on."""
    return next((p.url for p in e.pages if p.step == attempt.action.step), e.pages[-1].url if e.pages else "")
