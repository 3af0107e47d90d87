"""Whether the item a goal page holds breaks a constraint of the task: the rubric's "wrong item" (Intent 0).

Read from the recorded text of the cart, checkout or reservation page: the quantity and the reservation time the
query names ("add two boxes", "at 7:00 PM"), and the preference values that are plain facts of a line (a size, a
price ceiling, a party size).
Only what the page states is compared; a page that states none of them raises no problem.
"""

from __future__ import annotations

import re

from p2w_rt.replay.persona2web._goal import Goal
from p2w_rt.replay.persona2web._targets import RubricTargets

_QTY = re.compile(r"\bQty:? (\d+)\b|\bQuantity:? (\d+)\b|(?:^|[\s:])(\d+) × ", re.I | re.M)
_LINE_SIZE = re.compile(r"\bSize:? ([\w.]+)", re.I)
_LINE_PRICE = re.compile(r"\bQty:? (\d+) · \$([\d,]+(?:\.\d+)?)|\d+ × [^\n$]*? at \$([\d,]+(?:\.\d+)?)", re.I)
_PARTY = re.compile(r"\bparty of (\d+)\b", re.I)
_AT_TIME = re.compile(r"\bat (\d{1,2}:\d{2})\b")

_SIZE_VALUE = re.compile(r"^(?:(?:wo)?men'?s\s+)?(?:size\s+)?(\d{2}x\d{2}|\d{1,2}(?:\.5)?|xxs|xs|s|m|l|xl|xxl)$", re.I)
_CEILING = re.compile(
    r"\b(under|below|less than|at most|max(?:imum)?|up to|within|no more than)\s*\$\s*([\d,]+(?:\.\d+)?)"
    r"|\$\s*([\d,]+(?:\.\d+)?)\s*(?:or less|or under|max)\b",
    re.I,
)
_STRICT = frozenset({"under", "below", "less than"})
_PARTY_VALUE = re.compile(
    r"^(?:a )?(?:table for |party of )?(\d+) (?:people|persons|guests|diners)$|^(?:table for |party of )(\d+)$", re.I
)


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def wanted_sizes(preferences: tuple[str, ...]) -> set[str]:
    return {m.group(1).lower() for v in preferences if (m := _SIZE_VALUE.match(v.strip()))}


def price_ceilings(preferences: tuple[str, ...]) -> list[tuple[str, float, bool]]:
    out = []
    for value in preferences:
        found = _CEILING.search(value)
        if found:
            amount = found.group(2) or found.group(3)
            out.append((value, _number(amount), (found.group(1) or "").lower() in _STRICT))
    return out


def _unit_prices(text: str) -> list[float]:
    prices = []
    for m in _LINE_PRICE.finditer(text):
        if m.group(3):
            prices.append(_number(m.group(3)))
        else:
            prices.append(_number(m.group(2)) / max(1, int(m.group(1))))
    return prices


def item_problem(goal: Goal, targets: RubricTargets, text: str) -> str | None:
    """What about the page's item breaks the task ("size 32x32 in the cart, the task asks for 34x30"), or None."""
    times = {m.group(1).zfill(5) for m in _AT_TIME.finditer(text)} if goal.kind == "reservation" else set()
    if goal.time is not None and times and goal.time not in times:
        return f"time {' / '.join(sorted(times))} on the page, the task asks for {goal.time}"
    quantities = [int(next(g for g in m.groups() if g)) for m in _QTY.finditer(text)]
    if goal.quantity is not None and quantities and sum(quantities) != goal.quantity:
        return f"quantity {sum(quantities)} on the page, the task asks for {goal.quantity}"
    wanted = wanted_sizes(targets.preferences)
    for m in _LINE_SIZE.finditer(text) if wanted else ():
        if m.group(1).lower() not in wanted:
            return f"size {m.group(1)} on the page, the task asks for {' / '.join(sorted(wanted))}"
    for value, ceiling, strict in price_ceilings(targets.preferences):
        for price in _unit_prices(text):
            if price > ceiling or (strict and price >= ceiling):
                return f"unit price ${price:.2f} on the page breaks {value!r}"
    parties = {int(p.group(1) or p.group(2)) for v in targets.preferences if (p := _PARTY_VALUE.match(v.strip()))}
    for party in _PARTY.finditer(text) if parties else ():
        if int(party.group(1)) not in parties:
            return f"party of {party.group(1)} on the page, the task asks for {' / '.join(map(str, sorted(parties)))}"
    return None
