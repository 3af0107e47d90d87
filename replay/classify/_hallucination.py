"""Personalization hallucination: a user preference the agent applies that nothing it was told contains.

A preference is a constraint the agent *applies*: a number it types or selects as a search or
filter criterion (in typed search text only a number the text qualifies: ``under $40``, ``size 10.5``,
``34x30``; a bare ``wireless headphones 8`` is a query variant, see ``replay.matching.number_mentions``),
a filter parameter in a URL it brought about (``size=``, ``max_price=``, ``brand=``...), or a value its
reasoning attributes to the user, with or without the word "user"
("the user prefers Nike", "They prefer Nike", "apply the usual filters: 4+ stars", "as usual, cap the
price at $150", "my regular size 32x32"). Product facts it merely reports (a note, the answer, a price in
reasoning) are never read, and a number typed after the agent saw it on a page (a model number,
a listed price) is taken from the page, not from the user. A constraint is grounded when its value
appears (token-level fuzzy match, ``replay.matching``) in the query, a retrieved entry or a memory
answer; an ungrounded one is a hallucinated preference.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote_plus, urlsplit

from p2w_rt.replay.classify._labels import PERSONALIZATION_HALLUCINATION
from p2w_rt.replay.classify._texts import SEARCH_ACTIONS, Text, action_args, event_order, memory_texts, query_text
from p2w_rt.replay.matching import find_value, normalize, number_mentions, number_value
from p2w_rt.schemas import ErrorLabel, Evidence
from p2w_runtime.domain.trajectory import RationaleRecord, Trajectory

PREFERENCE_PARAM_WORDS = (
    "price",
    "rating",
    "star",
    "size",
    "brand",
    "color",
    "colour",
    "zip",
    "postal",
    "location",
    "city",
    "near",
    "cuisine",
    "diet",
    "width",
    "material",
)
"""A URL query parameter whose name contains one of these is a filter the agent set."""
NOT_FILTER_WORDS = ("page", "limit", "count", "offset", "sort", "order", "view", "per")
"""...unless it is about paging or ordering (``page_size=24``, ``sort=price``)."""
SEARCH_PARAMS = frozenset({"q", "query", "k", "keyword", "keywords", "search", "search_query", "term", "text", "st"})
"""A URL query parameter that holds search text; its numbers are search criteria."""
_NO_VALUE = frozenset({"", "0", "any", "all", "none", "true", "false", "asc", "desc", "relevance", "default"})

_HABIT = r"(?:usual|preferred|typical|favou?rite|go-to|regular|normal|standard|customary|habitual)"
_THE_HABIT = r"(?:usual|preferred|typical|favou?rite|go-to|customary|habitual)"
"""After a bare ``the`` fewer words count: "the regular price" and "the standard model" are product facts."""
_CATEGORY = (
    r"(?:budget|size|price(?:\s+(?:range|cap|limit))?|rating(?:\s+(?:standard|threshold))?|location|zip(?:\s*code)?|"
    r"city|area|brand|colou?r|home\s+airport|airline|seat(?:ing)?|party\s+size)"
)
_OWNER = r"(?:my|our|their|his|her|(?:the\s+)?(?:user|customer|shopper)(?:'s|\u2019s)?)"
_SUBJECT = r"(?:(?:the\s+)?(?:user|customer|shopper)|they|he|she)"
_VERB = (
    r"(?:usually|typically|always|generally|normally|often|frequently|regularly|prefers?|preferred|likes?|wants?|"
    r"needs?|requires?|favou?rs?|tends?\s+to|shops?\s+at|is\s+(?:located|based)\s+in|lives?\s+in|"
    r"(?:has|have)\s+(?:always\s+)?(?:bought|booked|ordered|chosen|used))"
)
_FIRST_PERSON_VERB = r"(?:usually|typically|always|generally|normally|often|prefer|like\s+to|shop\s+at|live\s+in)"
ATTRIBUTION = re.compile(
    rf"""\b{_OWNER}\s+(?:{_HABIT}|{_CATEGORY})   # my usual, their budget, the user's size, User's usual
    |\bthe\s+{_THE_HABIT}                         # the usual filters, apply the typical rating filter
    |\b{_SUBJECT}\s+{_VERB}                       # the user prefers, they usually, User frequently books
    |\bI\s+{_FIRST_PERSON_VERB}                   # I usually (the user's own words, echoed)
    """,
    re.I | re.X,
)
"""Words that say the value after them is the user's: owned habits, a habitual "the", a user who prefers."""
_HISTORY = r"(?:history|preferences?|profile|memory|past\s+(?:purchases|orders|bookings|behaviou?r))"
ADVERBIAL = re.compile(
    rf"""\b(?:as|like)\s+(?:usual|always|last\s+time)
    |\b(?:per|based\s+on|according\s+to|consistent\s+with|in\s+line\s+with)\s+(?:{_OWNER}\s+)?{_HISTORY}
    """,
    re.I | re.X,
)
"""Words that make a whole sentence the user's, wherever its value stands: "As usual, cap the price at $150"."""
_CLAUSE_END = re.compile(r"[;!?\n]|\.(?!\d)|,\s|\s(?:so|but|then|because|since|therefore|while)\s")
_SENTENCE_END = re.compile(r"[;!?\n]|\.(?!\d)")
_PROPER = re.compile(r"(?<![\w'])[A-Z][A-Za-z0-9'\u2019&\-]*")
_NOT_VALUES = frozenset({"I", "I'll", "I'm", "I've", "I'd", "OK"})
MAX_CLAUSE = 120


@dataclass(frozen=True, slots=True)
class Constraint:
    """A preference the agent applied: ``value`` is what must be grounded, ``shown`` how it appeared."""

    event_id: str
    value: str
    shown: str
    where: str
    order: int


def _numeric_constraints(text: Text, where: str, *, search: bool = False) -> Iterator[Constraint]:
    """Numbers of ``text``; in search text (``search``) only those the text qualifies (``number_mentions``)."""
    for mention in number_mentions(text.text):
        if mention.qualified or not search:
            yield Constraint(text.event_id, mention.value, mention.shown, where, text.order)


def typed_constraints(t: Trajectory, order: dict[str, int]) -> Iterator[Constraint]:
    """Numbers typed, searched or selected, unless the agent had seen them on a page before (product facts).

    What the agent saw is the observation's title and description and its own ``note`` actions: AgentOccam
    files record no page text at all (docs/design/runner-formats.md), only the notes the agent took.
    """
    pages = [(order.get(o.event_id, 0), f"{o.title} {o.description or ''}") for o in t.observations]
    pages += [(order.get(a.event_id, 0), " ".join(a.parsed.args)) for a in t.actions if a.parsed and a.name == "note"]
    for action in t.actions:
        if action.name not in SEARCH_ACTIONS:
            continue
        for text in action_args(action, order):
            search = action.name != "select_option"  # a selected option is a filter value, typed text a query
            for c in _numeric_constraints(text, f"{action.name} text at step {action.step}", search=search):
                if not any(at < c.order and find_value(c.value, page) for at, page in pages):
                    yield c


def _param_values(value: str) -> list[str]:
    parts = [p.strip() for p in re.split(r"[,;|]|\.\.|(?<=\d)-(?=\d)|(?<=\d)_(?=\d)", value)]
    return [p for p in parts if p.lower() not in _NO_VALUE]


def url_constraints(t: Trajectory, order: dict[str, int]) -> Iterator[Constraint]:
    """Filter parameters (``max_price=150``) and numbers in search parameters of URLs the agent brought about."""
    urls: list[Text] = [text for a in t.actions if a.name == "goto" for text in action_args(a, order)]
    urls += [Text(event_id, url, "page URL", order.get(event_id, 0)) for event_id, url in t.urls if url != t.start_url]
    seen: set[str] = set()
    for url in urls:
        if url.text in seen:
            continue
        seen.add(url.text)
        query = urlsplit(url.text).query if "?" in url.text else ""
        for key, raw in parse_qsl(query, keep_blank_values=False):
            name, value = key.lower(), unquote_plus(raw).strip()
            where = f"URL parameter in {url.where}"
            if name in SEARCH_PARAMS:
                yield from _numeric_constraints(Text(url.event_id, value, url.where, url.order), where, search=True)
            elif any(w in name for w in PREFERENCE_PARAM_WORDS) and not any(w in name for w in NOT_FILTER_WORDS):
                for part in _param_values(value):
                    needed = number_value(part) if re.search(r"\d", part) else part
                    if needed:
                        yield Constraint(url.event_id, needed, f"{key}={raw}", where, url.order)


def _clause_after(text: str, end: int) -> str:
    """From ``end`` to the end of its clause (a leading comma or colon skipped), at most ``MAX_CLAUSE`` characters."""
    rest = text[end : end + MAX_CLAUSE]
    lead = len(rest) - len(rest.lstrip(" ,:"))
    stop = _CLAUSE_END.search(rest, lead)
    return rest[: stop.start()] if stop else rest


def _sentence_around(text: str, start: int, end: int) -> tuple[str, str]:
    """The sentence holding ``text[start:end]``, split into what stands before the cue and after it."""
    before = text[max(0, start - MAX_CLAUSE) : start]
    stops = list(_SENTENCE_END.finditer(before))
    before = before[stops[-1].end() :] if stops else before
    after = text[end : end + MAX_CLAUSE]
    stop = _SENTENCE_END.search(after)
    return before, after[: stop.start()] if stop else after


def _values_in(
    r: RationaleRecord, clause: str, shown: str, where: str, at: int, *, skip_first: bool = False
) -> Iterator[Constraint]:
    """Numbers and proper names of ``clause``; ``skip_first`` drops a capitalized word opening a sentence."""
    for c in _numeric_constraints(Text(r.event_id, clause, where, at), where):
        yield Constraint(c.event_id, c.value, shown, where, at)
    for found in _PROPER.finditer(clause):
        name = found.group()
        opening = skip_first and not clause[: found.start()].strip()
        if not opening and name not in _NOT_VALUES and not name[0].isdigit():
            yield Constraint(r.event_id, name, shown, where, at)


def attributed_constraints(t: Trajectory, order: dict[str, int]) -> Iterator[Constraint]:
    """Numbers and proper names in what the planner's reasoning says the user prefers.

    After an attribution ("the user prefers", "my usual", "apply the typical rating filter") the rest of its
    clause is read; around a habitual adverbial ("as usual", "per the user's history") the whole sentence.
    """
    for r in t.planner_rationales:
        where = f"planner reasoning at step {r.step}"
        at = order.get(r.event_id, 0)
        for match in ATTRIBUTION.finditer(r.text):
            clause = _clause_after(r.text, match.end())
            yield from _values_in(r, clause, f"{match.group()}{clause}".strip(), where, at)
        for match in ADVERBIAL.finditer(r.text):
            before, after = _sentence_around(r.text, match.start(), match.end())
            shown = f"{before}{match.group()}{after}".strip()
            yield from _values_in(r, before, shown, where, at, skip_first=True)
            yield from _values_in(r, after.lstrip(" ,:"), shown, where, at, skip_first=not before.strip())


def applied_constraints(t: Trajectory, order: dict[str, int] | None = None) -> list[Constraint]:
    order = order if order is not None else event_order(t)
    found = [*typed_constraints(t, order), *url_constraints(t, order), *attributed_constraints(t, order)]
    return sorted(found, key=lambda c: c.order)


def ungrounded(constraints: Sequence[Constraint], grounding: Sequence[Text]) -> list[Constraint]:
    """Constraints whose value is in none of the grounding texts, one per distinct value."""
    missing: dict[str, Constraint] = {}
    for c in constraints:
        key = " ".join(normalize(c.value).split())
        if key in missing or any(find_value(c.value, g.text) for g in grounding):
            continue
        missing[key] = c
    return list(missing.values())


def hallucination(t: Trajectory) -> ErrorLabel | None:
    order = event_order(t)
    grounding = [query_text(t), *memory_texts(t, order)]
    missing = ungrounded(applied_constraints(t, order), grounding)
    if not missing:
        return None
    described = "; ".join(f"{c.shown!r} ({c.where})" for c in missing[:5])
    more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
    return ErrorLabel(
        label=PERSONALIZATION_HALLUCINATION,
        explanation=(
            f"applied {len(missing)} preference value(s) found neither in the query nor in "
            f"{len(grounding) - 1} retrieved entries / memory answers: {described}{more}"
        ),
        evidence=Evidence(
            event_ids=list(dict.fromkeys(c.event_id for c in missing)),
            text=" | ".join(c.shown for c in missing),
            note="ungrounded values: " + ", ".join(c.value for c in missing),
        ),
    )
