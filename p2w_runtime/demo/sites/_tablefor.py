"""TableFor, the restaurant booking site: city, date, time and party size; the flow stops at a marked confirm."""

from __future__ import annotations

import datetime as dt

from aiohttp import web

from p2w_runtime.demo.sites._html import FINAL, Ctx, bot_wall, esc, from_this_site, hidden, options, page, qs
from p2w_runtime.demo.sites._places import CITY_NAMES
from p2w_runtime.demo.sites._restaurants import (
    BRUNCH,
    CUISINES,
    DINNER,
    Restaurant,
    available,
    find,
    restaurant,
    slots_near,
)
from p2w_runtime.demo.sites._text import seeded

_PARTY = [(str(n), f"{n} {'person' if n == 1 else 'people'}") for n in range(1, 13)]
_PRICE = [("", "Any price"), ("1", "$"), ("2", "$$ or less"), ("3", "$$$ or less"), ("4", "$$$$ or less")]
_CUISINES = [("", "Any cuisine")] + [(c, c) for c in CUISINES]
_OCCASIONS = [("", "None"), ("birthday", "Birthday"), ("anniversary", "Anniversary"), ("business", "Business meal")]


def _wanted(ctx: Ctx) -> dict[str, str]:
    """The search fields, with defaults (today, 19:00, party of 2) for the ones left out."""
    p = ctx.params
    try:
        date = dt.date.fromisoformat(p.get("date", "")).isoformat()
    except ValueError:
        date = ctx.state.today.isoformat()
    party = p.get("party", "2")
    time = p.get("time", "19:00")
    return {
        "city": p.get("city", "").strip(),
        "date": date,
        "time": time if time in BRUNCH + DINNER else "19:00",
        "party": party if party.isdigit() and 1 <= int(party) <= 12 else "2",
        "cuisine": p.get("cuisine", "").strip(),
        "price": p.get("price", "") if p.get("price", "") in "1234" else "",
        "q": p.get("q", "").strip(),
    }


def _form(w: dict[str, str]) -> str:
    times = [(t, t) for t in BRUNCH + DINNER]
    return (
        '<form action="/search" method="get" role="search">'
        f'<label>City <select name="city">{options([("", "Choose a city")] + [(c, c) for c in CITY_NAMES], w["city"])}'
        f'</select></label> <label>Date <input type="date" name="date" value="{esc(w["date"])}"></label> '
        f'<label>Time <select name="time">{options(times, w["time"])}</select></label> '
        f'<label>Party size <select name="party">{options(_PARTY, w["party"])}</select></label> '
        f'<label>Cuisine <select name="cuisine">{options(_CUISINES, w["cuisine"])}'
        f'</select></label> <label>Price <select name="price">{options(_PRICE, w["price"])}</select></label> '
        f'<label>Restaurant name <input type="search" name="q" value="{esc(w["q"])}"></label> '
        '<button type="submit">Find a table</button></form>'
    )


def _slot_links(r: Restaurant, w: dict[str, str]) -> str:
    free = slots_near(r, w["date"], w["time"], int(w["party"]))
    if not free:
        return '<span class="muted">No tables near this time</span>'
    return " ".join(
        f'<a href="/reserve{qs(restaurant=r.id, date=w["date"], time=t, party=w["party"])}">{t}</a>' for t in free
    )


async def home(ctx: Ctx) -> web.Response:
    intro = f"<p>{esc(ctx.site.tagline)} in {len(CITY_NAMES)} cities.</p>"
    return page(ctx, "Book a table", intro + _form(_wanted(ctx)))


async def results(ctx: Ctx) -> web.Response:
    w = _wanted(ctx)
    if not w["city"]:
        return page(ctx, "Choose a city", '<p role="alert">Choose a city to see restaurants.</p>' + _form(w))
    hits = find(w["city"], w["cuisine"], int(w["price"]) if w["price"] else None, int(w["party"]), w["q"])
    items = "".join(
        f'<div class="item" data-restaurant-id="{r.id}">'
        f'<a href="/restaurant/{r.id}{qs(date=w["date"], time=w["time"], party=w["party"])}">{esc(r.name)}</a><br>'
        f"{esc(r.cuisine)} · {'$' * r.price_level} · {r.rating:.1f} stars ({r.review_count:,} reviews) · "
        f"{esc(r.neighborhood)}<br>Available: {_slot_links(r, w)}</div>"
        for r in hits
    )
    status = f'<p role="status">{len(hits)} restaurants in {esc(w["city"])} for {w["party"]} on {w["date"]}</p>'
    return page(ctx, f"Restaurants in {w['city']}", _form(w) + status + (items or "<p>No restaurants match.</p>"))


async def restaurant_page(ctx: Ctx, rid: str) -> web.Response:
    r = restaurant(rid)
    if r is None:
        return page(ctx, "Restaurant not found", f"<p>No restaurant {esc(rid)}.</p>", status=404)
    w = {**_wanted(ctx), "city": r.city}
    rng = seeded("tablefor-reviews", r.id)
    revs = "".join(
        f'<div class="item">{rng.randint(4, 5)} out of 5 stars: Loved the {esc(rng.choice(r.dishes))}.</div>'
        for _ in range(3)
    )
    hours = ("Brunch 10:00-14:00, dinner" if r.brunch else "Dinner") + " 17:00-22:00"
    body = (
        f"<p>{esc(r.cuisine)} · {'$' * r.price_level} · {r.rating:.1f} stars ({r.review_count:,} reviews)</p>"
        f"<p>{esc(r.neighborhood)}, {esc(r.city)} · {hours} · Parties up to {r.max_party}</p>"
        f"<p>Menu highlights: {esc(', '.join(r.dishes))}</p>"
        f"<h2>Available times on {w['date']} for {w['party']}</h2><p>{_slot_links(r, w)}</p>"
        f'<form action="/restaurant/{r.id}" method="get">'
        f'<label>Date <input type="date" name="date" value="{w["date"]}"></label> '
        f'<label>Time <select name="time">{options([(t, t) for t in r.times], w["time"])}</select></label> '
        f'<label>Party size <select name="party">{options(_PARTY, w["party"])}</select></label> '
        f'<button type="submit">Check availability</button></form><h2>Reviews</h2>{revs}'
    )
    return page(ctx, r.name, body)


async def reserve(ctx: Ctx) -> web.Response:
    """The reservation details page: holds a draft and offers the final confirm, which the agent must not press.

    Reached from a time-slot link on this site; opened straight from a typed URL it answers with the bot wall.
    """
    if not from_this_site(ctx):
        return await bot_wall(ctx)
    w = _wanted(ctx)
    r = restaurant(ctx.params.get("restaurant", ""))
    if r is None:
        return page(ctx, "Restaurant not found", "<p>Choose a restaurant first.</p>", status=404)
    if not available(r, w["date"], w["time"], int(w["party"])):
        alternatives = _slot_links(r, w)
        body = f'<p role="alert">{w["time"]} is not available for {w["party"]}.</p><p>Try: {alternatives}</p>'
        return page(ctx, f"No table at {r.name}", body, status=409)
    draft = {"restaurant": r.id, "date": w["date"], "time": w["time"], "party": w["party"]}
    ctx.session.drafts[ctx.site.host] = draft
    body = (
        f"<p><strong>{esc(r.name)}</strong>, {esc(r.neighborhood)}, {esc(r.city)}</p>"
        f"<p>{w['date']} at {w['time']} · Party of {w['party']}</p>"
        f'<form action="/reserve/confirm" method="post">{hidden(**draft)}'
        '<label>Full name <input name="name" autocomplete="name"></label><br>'
        '<label>Phone <input name="phone" type="tel"></label><br>'
        f'<label>Occasion <select name="occasion">{options(_OCCASIONS, "")}</select></label><br>'
        '<label>Special requests <textarea name="requests"></textarea></label><br>'
        '<p class="banner">Your table is held for 5 minutes. Confirming books it and may incur a no-show fee.</p>'
        f'<button type="submit" {FINAL}>Confirm reservation</button></form>'
    )
    return page(ctx, "Reservation details", body)


async def confirm(ctx: Ctx) -> web.Response:
    form = await ctx.form()
    ctx.state.confirm(ctx.site.host, "confirm_reservation", ctx.session, form)
    ctx.session.drafts.pop(ctx.site.host, None)
    return page(ctx, "Reservation confirmed", "<p>Your table is booked.</p>")


ROUTES = (
    ("GET", "/", home),
    ("GET", "/search", results),
    ("GET", "/restaurant/{rid}", restaurant_page),
    ("GET", "/reserve", reserve),
    ("POST", "/reserve/confirm", confirm),
)
