"""The sample agent on a demo site, one planner step at a time: from the search results to the task's final action.

Each step is decided from the page the prompt shows (element ids, values, links) and what the task asks
(``Wants``): open the chosen result, set size and quantity, add to the cart, set the ZIP and the delivery
option; pick a table's time slot; pick tickets and continue to checkout. Then stop on that page, never
pressing its final confirmation. Slips change one decision: ``wrong_item`` opens the result listed after the
right one, ``stops_early`` answers from the results page, ``blocked`` opens the final page by a typed URL
(which the sites' bot wall refuses) instead of using the site's own link or form.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from typing import Literal
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from p2w_runtime.demo.sites.catalog import SITES_BY_HOST
from p2w_runtime.testing._sample_page import Node, Page
from p2w_runtime.testing._sample_wants import Wants

Step = tuple[str, str]
"""(thought, action) of one planner reply."""
PageSlip = Literal["wrong_item", "stops_early", "blocked"]

_RATING = re.compile(r"(\d(?:\.\d)?) (?:out of 5 )?stars \(([\d,]+) reviews\)")
_WHEN = re.compile(r"(\w{3} \w{3} \d{2}, \d{4}) at (\d{2}:\d{2})")
_TIER = re.compile(r"^(.+) · \$([\d,.]+) each$")
SAVE_DELIVERY = "I save the delivery option."


def site_step(page: Page, wants: Wants, slip: PageSlip | None, last_step: str) -> Step:
    """The next step on the site the agent searched; ``last_step`` is the prompt's line for its previous step."""
    kind = SITES_BY_HOST[page.host].kind if page.host in SITES_BY_HOST else ""
    if kind == "shop":
        return _shop(page, wants, slip, last_step)
    if kind == "restaurants":
        return _tablefor(page, wants, slip)
    if kind == "events":
        return _stagepass(page, wants, slip)
    return "This page is not where the task can be done.", f"stop [I could not complete the task on {page.host}]"


def _stop(thought: str, answer: str) -> Step:
    return thought, f"stop [{answer}]"


def _absolute(page: Page, link: str) -> str:
    return urlunsplit(urlsplit(page.url)._replace(path=urlsplit(link).path, query=urlsplit(link).query))


def _pick(items: Sequence[Node], wants: Wants, slip: PageSlip | None) -> Node:
    """The result the task's wording asks for (best-rated, soonest, else the first listed); ``wrong_item`` takes
    the one listed after it."""
    ranked = list(items)
    if wants.choice == "rating":
        ranked.sort(key=lambda n: tuple(-x for x in _stars(n)))
    elif wants.choice == "soonest":
        ranked.sort(key=_when)
    chosen = ranked[0]
    if slip == "wrong_item" and len(items) > 1:
        return items[(list(items).index(chosen) + 1) % len(items)]
    return chosen


def _stars(node: Node) -> tuple[float, int]:
    found = _RATING.search(node.detail)
    return (float(found.group(1)), int(found.group(2).replace(",", ""))) if found else (0.0, 0)


def _when(node: Node) -> dt.datetime:
    found = _WHEN.search(node.detail)
    return dt.datetime.strptime(" ".join(found.groups()), "%a %b %d, %Y %H:%M") if found else dt.datetime.max


def _shop(page: Page, wants: Wants, slip: PageSlip | None, last_step: str) -> Step:
    if page.path == "/search":
        results = page.links("/product/")
        if not results:
            return _stop("No product matches the filters.", f"No product on {page.host} matches what the user wants")
        chosen = _pick(results, wants, slip)
        if slip == "stops_early":
            return _stop(f"{chosen.name} is the best match.", f"The best match on {page.host} is {chosen.name}")
        return f"{chosen.name} fits the filters best; I open it.", f"click [{chosen.id}]"
    if page.path.startswith("/product/"):
        return _product(page, wants, slip)
    if page.path == "/cart":
        return _cart(page, wants, last_step)
    return _stop("This page is not part of the purchase.", f"I could not add the item on {page.host}")


def _product(page: Page, wants: Wants, slip: PageSlip | None) -> Step:
    size_box, qty_box, add = (
        page.find("combobox", "Size"),
        page.find("spinbutton", "Quantity"),
        page.find("button", "Add to cart"),
    )
    name = page.find("heading", page.title.rsplit(" | ", 1)[0])
    product = name.name if name else page.title
    size = ""
    if size_box is not None:
        offered = [label for label, _ in size_box.options]
        wanted = wants.size(offered)
        if wanted is None:
            return _stop("The user's size is not offered.", f"{product} is not available in the user's size")
        if size_box.selected != wanted:
            return f"I choose size {wanted}.", f"type [{size_box.id}] [{wanted}] [0]"
        size = wanted
    qty = wants.quantity or 1
    if qty_box is not None and qty_box.value != str(qty):
        return f"The task asks for {qty}; I set the quantity.", f"type [{qty_box.id}] [{qty}] [0]"
    if add is None:
        return _stop("This product cannot be added to the cart.", f"{product} cannot be added to the cart")
    if slip == "blocked":
        params = {"product_id": page.path.rsplit("/", 1)[1], **({"size": size} if size else {}), "qty": str(qty)}
        url = _absolute(page, "/cart/add?" + urlencode(params))
        return f"I add {product} to the cart directly.", f"goto [{url}]"
    return f"I add {qty} × {product}{f' in size {size}' if size else ''} to the cart.", f"click [{add.id}]"


def _cart(page: Page, wants: Wants, last_step: str) -> Step:
    lines = page.links("/product/")
    if not lines:
        return _stop("The cart is empty.", f"The item could not be added to the cart on {page.host}")
    zip_box = page.find("textbox", "Delivery ZIP code")
    if wants.zip and zip_box is not None and zip_box.value != wants.zip:
        return f"The user lives at ZIP {wants.zip}; I set it for delivery.", f"type [{zip_box.id}] [{wants.zip}] [1]"
    same_day = page.find("radio", "Same-day delivery")
    if wants.same_day and same_day is not None and SAVE_DELIVERY not in last_step:
        if not same_day.checked:
            return "The user wants same-day delivery.", f"click [{same_day.id}]"
        save = page.find("button", "Save delivery option")
        if save is not None:
            return SAVE_DELIVERY, f"click [{save.id}]"
    items = "; ".join(f"{n.name} {n.detail.strip(' ·')}" for n in lines)
    delivery = next((n.name for n in page.nodes if n.role == "radio" and n.checked), "")
    answer = f"Added to the cart on {page.host}: {items}" + (f"; delivery: {delivery}" if delivery else "")
    return _stop("The cart holds what the task asks; I stop before checkout.", answer)


def _tablefor(page: Page, wants: Wants, slip: PageSlip | None) -> Step:
    if page.path == "/search":
        shown = page.find("textbox", "Date")
        wanted = wants.date(shown.value) if shown else None
        if wanted and shown is not None and shown.value != wanted:
            query = dict(parse_qsl(urlsplit(page.url).query)) | {"date": wanted}
            url = urlunsplit(urlsplit(page.url)._replace(query=urlencode(query, safe=":")))
            return f"The task is for {dt.date.fromisoformat(wanted):%A}, {wanted}; I search that date.", f"goto [{url}]"
        places = _restaurants(page)
        if not places:
            return _stop("No restaurant has a table.", f"No restaurant on {page.host} has a table for this search")
        with_time = [r for r, slots in places if any(s.name == wants.time for s in slots)]
        chosen = _pick(with_time or [r for r, _ in places], wants, slip)
        if slip == "stops_early":
            return _stop(f"{chosen.name} has a table.", f"{chosen.name} has a table at {wants.time} on {page.host}")
        return f"{chosen.name} has a table at the requested time; I open it.", f"click [{chosen.id}]"
    if page.path.startswith("/restaurant/"):
        slots = page.links("/reserve?")
        if not slots:
            return _stop("No table is free.", f"{page.title.rsplit(' | ', 1)[0]} has no free table for this search")
        slot = next((s for s in slots if s.name == wants.time), slots[0])
        if slip == "blocked":
            return f"I open the reservation for {slot.name} directly.", f"goto [{_absolute(page, unquote(slot.url))}]"
        return f"I take the {slot.name} table.", f"click [{slot.id}]"
    if page.title.startswith("Reservation details"):
        answer = f"Reservation details open on {page.host}, not confirmed: {page.summary()}"
        return _stop("This is the reservation details page; I do not confirm.", answer)
    return _stop("This page is not part of the reservation.", f"I could not open the reservation on {page.host}")


def _restaurants(page: Page) -> list[tuple[Node, list[Node]]]:
    """Each listed restaurant with the time-slot links shown under it."""
    out: list[tuple[Node, list[Node]]] = []
    for node in page.nodes:
        url = unquote(node.url)
        if node.role == "link" and url.startswith("/restaurant/"):
            out.append((node, []))
        elif node.role == "link" and url.startswith("/reserve?") and out:
            out[-1][1].append(node)
    return out


def _stagepass(page: Page, wants: Wants, slip: PageSlip | None) -> Step:
    if page.path == "/search":
        events = page.links("/event/")
        if not events:
            return _stop("No event matches.", f"No event on {page.host} matches what the user wants")
        chosen = _pick(events, wants, slip)
        if slip == "stops_early":
            return _stop(f"{chosen.name} fits.", f"{chosen.name} on {page.host} fits: {chosen.detail}")
        return f"{chosen.name} fits the user; I open it.", f"click [{chosen.id}]"
    if page.path.startswith("/event/"):
        return _event(page, wants, slip)
    if page.path == "/checkout":
        answer = f"At checkout on {page.host}, not bought: {page.summary()}"
        return _stop("This is the checkout; I do not buy.", answer)
    return _stop("This page is not part of the purchase.", f"I could not reach the checkout on {page.host}")


def _event(page: Page, wants: Wants, slip: PageSlip | None) -> Step:
    tier_box, qty_box = page.find("combobox", "Ticket type"), page.find("combobox", "Quantity")
    button = page.find("button", "Continue to checkout")
    if tier_box is None or qty_box is None or button is None:
        return _stop("Tickets cannot be chosen here.", f"No tickets can be chosen on {page.url}")
    tiers = [
        (label, m.group(1), float(m.group(2).replace(",", "")))
        for label, _ in tier_box.options
        if (m := _TIER.match(label))
    ]
    fitting = [t for t in tiers if wants.budget is None or t[2] < wants.budget]
    if not fitting:
        return _stop(
            "Every ticket is over the budget.", f"No ticket for {page.title.rsplit(' | ', 1)[0]} is within budget"
        )
    if not any(label == tier_box.selected for label, _, _ in fitting):
        return f"{fitting[0][1]} is within the budget.", f"type [{tier_box.id}] [{fitting[0][0]}] [0]"
    qty = str(wants.quantity or 1)
    if qty_box.selected != qty:
        return f"The user wants {qty} tickets.", f"type [{qty_box.id}] [{qty}] [0]"
    if slip == "blocked":
        tier = next(t for t in fitting if t[0] == tier_box.selected)[1]
        url = _absolute(
            page, "/checkout?" + urlencode({"event": page.path.rsplit("/", 1)[1], "tier": tier, "qty": qty})
        )
        return "I open the checkout directly.", f"goto [{url}]"
    return f"{qty} × {tier_box.selected.split(' · ')[0]}; I continue to checkout.", f"click [{button.id}]"
