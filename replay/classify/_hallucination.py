"""Personalization hallucination: a user preference the agent applies that nothing it was told contains.

A preference is a constraint the agent *applies*: a number it types or selects as a search or
filter criterion, a filter parameter in a URL it brought about (``size=``, ``max_price=``,
``brand=``...), or a value it attributes to the user in its reasoning ("the user prefers Nike",
"the user's budget is $150"). Product facts it merely reports (a note, the answer, a price in
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

from replay.classify._labels import PERSONALIZATION_HALLUCINATION
from replay.classify._texts import SEARCH_ACTIONS, Text, action_args, event_order, memory_texts, query_text
from replay.matching import find_value, normalize, tokenize
from replay.trajectory import Trajectory
from schemas import ErrorLabel, Evidence

_NUMBER = re.compile(
    r"(?<![\w.\-/])(?:[$€£]\s?)?\d+(?:[.,:]\d+)*(?:\s?[x×]\s?\d+(?:\.\d+)?)?(?:\s?(?:\+|%|stars?\b|reviews?\b))?"
)
_YEAR = re.compile(r"^(?:19|20)\d\d$")

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

_USER = r"\b(?:the\s+)?user(?:'s|\u2019s)?\s+"
_VERB = (
    r"(?:usually|typically|always|generally|normally|often|prefers?|preferred|likes?|wants?|needs?|requires?|"
    r"favou?rs?|shops?\s+at|is\s+(?:located|based)\s+in|lives\s+in)"
)
_HABIT = r"(?:usual|preferred|typical|favou?rite|go-to|regular|normal|standard)"
_CATEGORY = (
    r"(?:budget|size|price(?:\s+range)?|rating(?:\s+(?:standard|threshold))?|location|zip(?:\s*code)?|city|brand|"
    r"colou?r)"
)
ATTRIBUTION = re.compile(rf"(?:{_USER}(?:{_VERB}|{_HABIT}|{_CATEGORY})|\b(?:my|their|his|her)\s+{_HABIT})\b", re.I)
_CLAUSE_END = re.compile(r"[;!?\n]|\.(?!\d)|,\s|\s(?:so|but|then|because|since|therefore|while)\s")
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


def _numbers(mention: str) -> str | None:
    """The number tokens of a mention (``$150`` -> ``150``, ``32x32`` -> ``32 32``); None for years and zeros."""
    numbers = [w for w in tokenize(mention).words if w[0].isdigit() and w != "0"]
    if not numbers:
        return None
    if len(numbers) == 1 and _YEAR.match(numbers[0]) and not re.search(r"[$€£]", mention):
        return None
    return " ".join(numbers)


def _numeric_constraints(text: Text, where: str) -> Iterator[Constraint]:
    for match in _NUMBER.finditer(text.text):
        value = _numbers(match.group())
        if value is not None:
            yield Constraint(text.event_id, value, match.group().strip(), where, text.order)


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
            for c in _numeric_constraints(text, f"{action.name} text at step {action.step}"):
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
                yield from _numeric_constraints(Text(url.event_id, value, url.where, url.order), where)
            elif any(w in name for w in PREFERENCE_PARAM_WORDS) and not any(w in name for w in NOT_FILTER_WORDS):
                for part in _param_values(value):
                    needed = _numbers(part) if re.search(r"\d", part) else part
                    if needed:
                        yield Constraint(url.event_id, needed, f"{key}={raw}", where, url.order)


def attributed_constraints(t: Trajectory, order: dict[str, int]) -> Iterator[Constraint]:
    """Numbers and proper names in what the planner's reasoning says the user prefers."""
    for r in t.planner_rationales:
        where = f"planner reasoning at step {r.step}"
        at = order.get(r.event_id, 0)
        for match in ATTRIBUTION.finditer(r.text):
            rest = r.text[match.end() : match.end() + MAX_CLAUSE]
            end = _CLAUSE_END.search(rest)
            clause = rest[: end.start()] if end else rest
            shown = f"{match.group()}{clause}".strip()
            yield from (
                Constraint(c.event_id, c.value, shown, where, at)
                for c in _numeric_constraints(Text(r.event_id, clause, where, at), where)
            )
            for name in _PROPER.findall(clause):
                if name not in _NOT_VALUES and not name[0].isdigit():
                    yield Constraint(r.event_id, name, shown, where, at)


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
