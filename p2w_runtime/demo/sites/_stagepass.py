"""StagePass, the event ticket site: city, genre, price ceiling; the flow stops at a marked "Buy tickets"."""

from __future__ import annotations

from aiohttp import web

from p2w_runtime.demo.sites._events import GENRES, Event, event, find
from p2w_runtime.demo.sites._html import FINAL, Ctx, bot_wall, esc, from_this_site, hidden, money, options, page
from p2w_runtime.demo.sites._places import CITY_NAMES

_QTY = [(str(n), str(n)) for n in range(1, 9)]


def _form(city: str, genre: str, max_price: str, q: str) -> str:
    return (
        '<form action="/search" method="get" role="search">'
        f'<label>City <select name="city">{options([("", "All cities")] + [(c, c) for c in CITY_NAMES], city)}'
        f'</select></label> <label>Category <select name="genre">'
        f"{options([('', 'All categories')] + [(g, g.title()) for g in GENRES], genre)}</select></label> "
        f'<label>Max price per ticket ($) <input type="number" name="max_price" min="0" value="{esc(max_price)}">'
        f'</label> <label>Artist, show or venue <input type="search" name="q" value="{esc(q)}"></label> '
        '<button type="submit">Find events</button></form>'
    )


def _when(ctx: Ctx, e: Event) -> str:
    return e.date(ctx.state.today).strftime("%a %b %d, %Y") + f" at {e.time}"


async def home(ctx: Ctx) -> web.Response:
    return page(ctx, "Find live events", f"<p>{esc(ctx.site.tagline)}.</p>{_form('', '', '', '')}")


async def results(ctx: Ctx) -> web.Response:
    p = ctx.params
    city, genre, q = p.get("city", "").strip(), p.get("genre", "").strip().lower(), p.get("q", "").strip()
    raw_max = p.get("max_price", "").strip()
    try:
        max_price = float(raw_max) if raw_max else None
    except ValueError:
        max_price, raw_max = None, ""
    hits = find(city, genre, max_price, q)
    items = "".join(
        f'<div class="item" data-event-id="{e.id}"><a href="/event/{e.id}">{esc(e.title)}</a><br>'
        f"{esc(e.genre.title())} · {esc(e.venue)}, {esc(e.city)} · {_when(ctx, e)} · from {money(e.min_price)}</div>"
        for e in hits
    )
    status = f'<p role="status">{len(hits)} events</p>'
    return page(ctx, "Events", _form(city, genre, raw_max, q) + status + (items or "<p>No events match.</p>"))


async def event_page(ctx: Ctx, eid: str) -> web.Response:
    e = event(eid)
    if e is None:
        return page(ctx, "Event not found", f"<p>No event {esc(eid)}.</p>", status=404)
    tiers = [(name, f"{name} · {money(price)} each") for name, price in e.tiers]
    body = (
        f"<p>{esc(e.genre.title())} · {esc(e.venue)}, {esc(e.city)}</p><p>{_when(ctx, e)}</p>"
        "<h2>Tickets</h2><ul>" + "".join(f"<li>{esc(n)}: {money(pr)}</li>" for n, pr in e.tiers) + "</ul>"
        f'<form action="/checkout" method="get">{hidden(event=e.id)}'
        f'<label>Ticket type <select name="tier">{options(tiers, e.tiers[0][0])}</select></label> '
        f'<label>Quantity <select name="qty">{options(_QTY, "2")}</select></label> '
        '<button type="submit">Continue to checkout</button></form>'
    )
    return page(ctx, e.title, body)


async def checkout(ctx: Ctx) -> web.Response:
    """The ticket checkout, reached through the event page's form; a typed URL meets the bot wall."""
    if not from_this_site(ctx):
        return await bot_wall(ctx)
    e = event(ctx.params.get("event", ""))
    prices = dict(e.tiers) if e else {}
    tier, qty = ctx.params.get("tier", ""), ctx.params.get("qty", "1")
    if e is None or tier not in prices or not qty.isdigit() or not 1 <= int(qty) <= 8:
        return page(
            ctx, "Choose tickets", '<p role="alert">Choose an event, a ticket type and a quantity.</p>', status=400
        )
    draft = {"event": e.id, "tier": tier, "qty": qty}
    ctx.session.drafts[ctx.site.host] = draft
    total = prices[tier] * int(qty)
    body = (
        f"<p><strong>{esc(e.title)}</strong> · {esc(e.venue)}, {esc(e.city)} · {_when(ctx, e)}</p>"
        f"<p>{qty} × {esc(tier)} at {money(prices[tier])} = <strong>{money(total)}</strong></p>"
        f'<p><a href="/event/{e.id}">Change tickets</a></p>'
        '<p class="banner">Tickets are non-refundable. Buying charges your saved card.</p>'
        f'<form action="/checkout/place" method="post">{hidden(**draft)}'
        f'<button type="submit" {FINAL}>Buy tickets</button></form>'
    )
    return page(ctx, "Checkout", body)


async def buy(ctx: Ctx) -> web.Response:
    ctx.state.confirm(ctx.site.host, "buy_tickets", ctx.session, await ctx.form())
    ctx.session.drafts.pop(ctx.site.host, None)
    return page(ctx, "Tickets purchased", "<p>Your tickets are on their way.</p>")


ROUTES = (
    ("GET", "/", home),
    ("GET", "/search", results),
    ("GET", "/event/{eid}", event_page),
    ("GET", "/checkout", checkout),
    ("POST", "/checkout/place", buy),
)
