"""What final goal a Persona2Web query asks for, and what a page or an element of that goal looks like.

Persona2Web's Intent (appendix E.3) scores whether "the requested final goal was achieved": an item added to
the cart, the booking / reservation details reached, the information found. The goal is read from the query
text by the patterns below (docs/design/judges.md lists them with the real queries that shaped them); a goal
the query negates ("go to checkout without buying", "do not book") is the step before the negated one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from p2w_rt.replay.persona2web._choice import Superlative, superlative_of

GoalKind = Literal["cart", "reservation", "checkout", "information"]

_NEGATED = re.compile(
    r"\b(?:without|do not|don't|never|not)\s+(?:\w+\s+){0,2}?"
    r"(?:confirm\w*|buy\w*|book\w*|purchas\w*|plac\w*|pay\w*|reserv\w*|check\w* ?out)\b"
    r"|\bno (?:reservation|booking|purchase)s? (?:required|needed)\b"
)
"""A final step the query rules out; removed before the goal is read."""

_GOALS: tuple[tuple[GoalKind, re.Pattern[str]], ...] = (
    (
        "checkout",
        re.compile(r"\b(?:go|proceed|continue|get|head) (?:on )?to (?:the )?check ?out\b|\bcheck ?out page\b"),
    ),
    (
        "reservation",
        re.compile(
            r"\b(?:reservation|booking) details\b|\bmake (?:a )?(?:reservation|booking)\b"
            r"|(?:^|[,.;:]\s*|\b(?:and|then|to)\s+)(?:book|reserve)\b"
        ),
    ),
    ("cart", re.compile(r"\badd\b[^.;]{0,90}?\b(?:cart|basket|bag|trolley)\b")),
)
"""The furthest step asked for wins: checkout over reservation over cart."""

_CLOCK = re.compile(r"\bat (\d{1,2})(?::(\d{2}))?\s*([ap])\.?m\b")
_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "a pair of": 2}
_QUANTITY = re.compile(
    r"\b(?:add|pick|choose|select|buy|get)\s+(\d+|one|two|three|four|five|six)\b(?!\s*(?:stars?|%|x\d))"
)


@dataclass(frozen=True, slots=True)
class Goal:
    """The goal of one query: its kind, the words that said so, and an explicit item count if it names one."""

    kind: GoalKind
    phrase: str
    quantity: int | None = None
    time: str | None = None
    """A clock time the query asks for ("at 7:00 PM" -> "19:00"), compared with a reservation page's."""
    best: Superlative | None = None
    """What the query asks of the choice ("the best-rated one"), checked against the results page it came from."""

    @property
    def acts(self) -> bool:
        """Whether the goal is a state of the site (cart, reservation, checkout) rather than an answer."""
        return self.kind != "information"


def goal_of(query: str) -> Goal:
    """The goal ``query`` asks for (bold markers and a leading ``Query:`` ignored)."""
    text = query.replace("**", "").lower()
    text = re.sub(r"^\s*query:\s*", "", text)
    text = _NEGATED.sub(" ", text)
    quantity = None
    counted = _QUANTITY.search(text)
    if counted:
        word = counted.group(1)
        quantity = int(word) if word.isdigit() else _NUMBERS[word]
    clock = _CLOCK.search(text)
    time = None
    if clock:
        hour = int(clock.group(1)) % 12 + (12 if clock.group(3).startswith("p") else 0)
        time = f"{hour:02d}:{clock.group(2) or '00'}"
    for kind, pattern in _GOALS:
        found = pattern.search(text)
        if found:
            return Goal(kind, found.group(0).strip(" ,.;:"), quantity, time, superlative_of(text))
    return Goal("information", "", None, time)


_DECISIVE_NAME = {
    "cart": re.compile(r"\badd(?:ed)?\b.{0,24}\b(?:cart|basket|bag|trolley)\b", re.I),
    "checkout": re.compile(r"\bcheck ?out\b", re.I),
    "reservation": re.compile(
        r"\b(?:reserve|book|reservation|find a table|select)\b|^\s*\d{1,2}(?::\d{2})?\s*(?:[ap]\.?m\.?)?\s*$", re.I
    ),
}
"""The accessible name of the element whose press is the goal's decisive action."""

_DECISIVE_TEXT = {
    "cart": re.compile(
        r"\badd(?:s|ed|ing)?\b[^.;\n]{0,60}?\b(?:to (?:the |my |your )?)(?:shopping )?(?:cart|basket|bag)\b", re.I
    ),
    "checkout": re.compile(
        r"\b(?:go|proceed|continu\w*|head)\w* (?:on )?to (?:the )?check ?out\b|\bcheck ?out\b", re.I
    ),
    "reservation": re.compile(r"\b(?:reserv\w*|book\w*|reservation details|time slot|slot)\b", re.I),
}
"""Words of an action or of the reasoning for it that say it is the decisive one (imported runs name no element)."""

_PAGE_PATH = {
    "cart": re.compile(r"/(?:cart|basket|bag|trolley|shopping-?cart)(?:[/.?#_-]|$)", re.I),
    "checkout": re.compile(r"/check-?out(?:[/.?#_-]|$)", re.I),
    "reservation": re.compile(r"/(?:reserve|reservations?|booking|book)(?:[/.?#_-]|$)", re.I),
}
_PAGE_TITLE = {
    "cart": re.compile(r"\b(?:your|my|shopping) (?:cart|basket|bag|trolley)\b|\bcart\b", re.I),
    "checkout": re.compile(r"\bcheck ?out\b|\breview your order\b", re.I),
    "reservation": re.compile(r"\b(?:reservation|booking) details\b|\bcomplete your (?:reservation|booking)\b", re.I),
}
_IN_CART = re.compile(r"\b(?:cart|basket|bag)\s*\((?!0\))\d+\)|\badded to (?:your |the )?(?:cart|basket|bag)\b", re.I)
_EMPTY = re.compile(r"\b(?:cart|basket|bag) is empty\b|\bno items in (?:your |the )?(?:cart|basket|bag)\b", re.I)
_UNAVAILABLE = re.compile(
    r"\bout of stock\b|\bsold out\b|\bcurrently unavailable\b|\bno longer available\b|\bis not available\b"
    r"|\bno tables? (?:available|left)\b|\bfully booked\b",
    re.I,
)


def is_decisive_name(kind: GoalKind, name: str) -> bool:
    return kind != "information" and bool(_DECISIVE_NAME[kind].search(name))


def decisive_words(kind: GoalKind, text: str) -> str | None:
    """The words in ``text`` that name the goal's decisive action, or None."""
    if kind == "information" or not text:
        return None
    found = _DECISIVE_TEXT[kind].search(text)
    return found.group(0) if found else None


def is_goal_page(kind: GoalKind, url: str, title: str = "") -> bool:
    """Whether a page is where the goal ends: by its URL path, else by its title."""
    if kind == "information":
        return False
    parts = urlsplit(url)
    return bool(_PAGE_PATH[kind].search(parts.path or "/")) or bool(title and _PAGE_TITLE[kind].search(title))


def cart_holds(text: str) -> str | None:
    """Words of a page saying the cart holds something ("Cart (1)", "Added to cart"), or None."""
    found = _IN_CART.search(text)
    return found.group(0) if found else None


def empty_cart(text: str) -> str | None:
    found = _EMPTY.search(text)
    return found.group(0) if found else None


def unavailable(text: str) -> str | None:
    """Words of a page or an answer saying the item or slot cannot be had (out of stock, sold out...)."""
    found = _UNAVAILABLE.search(text)
    return found.group(0) if found else None


_AGENT_STATUSES = frozenset({400, 404, 405, 410, 414, 422})
"""HTTP statuses of a request the agent got wrong (no size chosen, a made-up URL): not an external block."""
_STATUS = re.compile(r"\bHTTP (\d{3})\b")
_CANNOT = re.compile(
    r"\b(?:could not|couldn't|cannot|can't|unable to|was not able to|wasn't able to|failed to)"
    r" (?:find|locate|complete|access|load)\b"
    r"|\bno (?:matching )?results\b",
    re.I,
)


def external_block(detail: str | None) -> bool:
    """Whether a ``blocked`` end is the site's doing (CAPTCHA, 403, 409, 429, 5xx), not a bad request of the agent's."""
    found = _STATUS.search(detail or "")
    return found is None or int(found.group(1)) not in _AGENT_STATUSES


def gave_up(answer: str) -> str | None:
    """Words of an answer that say the search failed ("could not find", "no results")."""
    found = _CANNOT.search(answer)
    return found.group(0) if found else None
