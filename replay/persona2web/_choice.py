"""Whether the item the decisive action acted on is the one a superlative of the query asks for.

"Add the best-rated one", "the cheapest", "tickets for the soonest one": the chosen item must be the best by that
measure among the results listed on the page the agent chose it from, as that step's AX tree recorded them
(``[41] link "Wavelength Lite ..."`` with ``/url: /product/bsk-au003`` and the text after it, ``$64.99 · 4.4 out of
5 stars (50 reviews)``). Items the task rules out by what the listing states are not compared: one over a price
ceiling, or listed with sizes none of which the task asks for; the best-rated item over budget is not the one asked
for. A page that shows no such measure decides nothing (docs/design/judges.md, Intent).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Literal
from urllib.parse import urljoin, urlsplit

Measure = Literal["rating", "price", "date"]

_SUPERLATIVES: tuple[tuple[Measure, re.Pattern[str]], ...] = (
    (
        "rating",
        re.compile(
            r"\b(?:best|highest|top)[- ](?:rated|reviewed)\b(?! sellers?\b)|\bhighest[- ]rating\b|\bmost highly rated\b"
        ),
    ),
    ("price", re.compile(r"\bcheapest\b|\blowest[- ](?:price[ds]?|cost|priced)\b|\bleast expensive\b")),
    ("date", re.compile(r"\bsoonest\b|\bearliest\b")),
)
"""What the query asks of the choice; "top match" / "best match" name no measure and are not read."""
_SORTED = re.compile(r"\bsort(?:ed)? by\s*$")
"""A sort order the query asks for ("sorted by lowest price") is not a choice among the results."""


@dataclass(frozen=True, slots=True)
class Superlative:
    measure: Measure
    phrase: str

    @property
    def wants_max(self) -> bool:
        return self.measure == "rating"


def superlative_of(text: str) -> Superlative | None:
    """The superlative a (lower-cased, bold-free) query asks of the chosen item, or None."""
    for measure, pattern in _SUPERLATIVES:
        for found in pattern.finditer(text):
            if not _SORTED.search(text[: found.start()]):
                return Superlative(measure, found.group(0))
    return None


@dataclass(frozen=True, slots=True)
class Listed:
    """One result of a listing: its link and the measures the text after it states."""

    name: str
    url: str
    rating: float | None
    price: float | None
    when: datetime | None
    sizes: frozenset[str] = frozenset()

    def value(self, measure: Measure) -> float | None:
        """The measure as a number (a date as its timestamp), or None when the listing does not state it."""
        if measure == "date":
            return self.when.timestamp() if self.when else None
        return self.rating if measure == "rating" else self.price

    def shows(self, measure: Measure) -> str:
        if measure == "date":
            return f"on {self.when:%Y-%m-%d %H:%M}"
        return f"rated {self.rating:g}" if measure == "rating" else f"at ${self.price:,.2f}"


_LINK = re.compile(r'^(?P<indent> *)\[\d+\] link "(?P<name>(?:[^"\\]|\\.)*)"')
_NUMBERED = re.compile(r"^(?P<indent> *)\[\d+\] ")
_URL = re.compile(r"^ */url: (?P<url>\S+)")
_RATING = re.compile(
    r"\b([0-5](?:\.\d)?) out of 5(?: stars)?\b|\b([0-5]\.\d) stars?\b|\brated ([0-5](?:\.\d)?)\b", re.I
)
_SIZES = re.compile(r"\bSizes?: ([\w.]+(?:, [\w.]+)*)")
_PRICE = re.compile(r"\$\s?([\d,]+(?:\.\d{1,2})?)")
_DATE = re.compile(
    r"\b([A-Z][a-z]{2}) (\d{1,2}), (\d{4})(?: at (\d{1,2}:\d{2}))?"  # StagePass: "Sat Dec 05, 2026 at 20:00"
    r"|\b(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}:\d{2}))?"
)


def _when(text: str) -> datetime | None:
    found = _DATE.search(text)
    if found is None:
        return None
    try:
        if found.group(5):
            return datetime.fromisoformat(f"{found.group(5)} {found.group(6) or '00:00'}")
        day = f"{found.group(1)} {found.group(2)} {found.group(3)} {found.group(4) or '00:00'}"
        return datetime.strptime(day, "%b %d %Y %H:%M")
    except ValueError:
        return None


def listed(ax_text: str) -> list[Listed]:
    """The links of an AX tree with the text that follows each (unnumbered lines at its level, and its children)."""
    lines = ax_text.splitlines()
    out = []
    for i, line in enumerate(lines):
        link = _LINK.match(line)
        if link is None:
            continue
        indent, url, said = len(link.group("indent")), "", [link.group("name")]
        for j in range(i + 1, len(lines)):
            below = lines[j]
            numbered = _NUMBERED.match(below)
            if _LINK.match(below) or (numbered and len(numbered.group("indent")) <= indent):
                break
            if len(below) - len(below.lstrip(" ")) < indent:
                break
            found = _URL.match(below)
            if found and not url:
                url = found.group("url")
            elif not found:
                said.append(below.strip())
        text = " ".join(said[1:])
        rating = _RATING.search(text)
        price = _PRICE.search(text)
        sizes = _SIZES.search(text)
        out.append(
            Listed(
                link.group("name"),
                url,
                float(next(g for g in rating.groups() if g)) if rating else None,
                float(price.group(1).replace(",", "")) if price else None,
                _when(text),
                frozenset(v.lower() for v in sizes.group(1).split(", ")) if sizes else frozenset(),
            )
        )
    return out


def _same_page(link: str, base: str, item: str) -> bool:
    target, page = urlsplit(urljoin(base, link)), urlsplit(item)
    same = target.netloc == page.netloc and target.path.rstrip("/") == page.path.rstrip("/")
    return same and page.path not in ("", "/")


@dataclass(frozen=True, slots=True)
class ChoiceCheck:
    """The outcome: ``problem`` when the choice breaks the superlative; ``note`` says what it was decided from."""

    note: str
    problem: str | None = None


def _ruled_out(it: Listed, ceilings: list[float], sizes: set[str]) -> bool:
    over = it.price is not None and any(it.price > c for c in ceilings)
    return over or bool(sizes and it.sizes and not sizes & it.sizes)


def check_choice(
    want: Superlative, item_url: str, pages: list[tuple[int, str, str]], ceilings: list[float], sizes: set[str]
) -> ChoiceCheck:
    """Check the item at ``item_url`` against the latest of ``pages`` (step, URL, AX text) that links to it;
    results over one of the price ``ceilings`` or listed without any of the ``sizes`` asked for are not rivals."""
    for step, url, text in reversed(pages):
        items = listed(text)
        chosen = next((it for it in items if it.url and _same_page(it.url, url, item_url)), None)
        if chosen is None:
            continue
        where = f"the results page of step {step}"
        rivals = [it for it in items if it.value(want.measure) is not None and it.url != chosen.url]
        rivals = [it for it in rivals if not _ruled_out(it, ceilings, sizes)]
        mine = chosen.value(want.measure)
        if mine is None or not rivals:
            shown = (
                "states no such measure for it"
                if mine is None
                else "lists no other result with it that the task allows"
            )
            return ChoiceCheck(f"'{want.phrase}' not checked: {where} {shown} ('{chosen.name}')")

        def key(it: Listed) -> float:
            return it.value(want.measure) or 0.0

        best = max(rivals, key=key) if want.wants_max else min(rivals, key=key)
        if (mine < key(best)) if want.wants_max else (mine > key(best)):
            problem = (
                f"wrong item: '{chosen.name}' {chosen.shows(want.measure)} chosen, '{best.name}' "
                f"{best.shows(want.measure)} listed on {where}; the task asks for the {want.phrase}"
            )
            return ChoiceCheck(problem, problem)
        return ChoiceCheck(
            f"'{want.phrase}': '{chosen.name}' {chosen.shows(want.measure)} is the best of "
            f"{len(rivals) + 1} listed on {where}"
        )
    return ChoiceCheck(f"'{want.phrase}' not checked: no recorded results page links to {item_url}")
