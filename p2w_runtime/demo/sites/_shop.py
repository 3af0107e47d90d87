"""The two demo shops (Threads, Basket): search with filters, product pages, ZIP, cart and a checkout that stops.

Filters are GET parameters so the result URL alone says what was filtered; cart, ZIP and delivery
choice live in the cookie session. "Place order" is the marked final confirmation.
"""

from __future__ import annotations

import json

from aiohttp import web

from p2w_runtime.demo.sites._html import FINAL, Ctx, bot_wall, esc, hidden, money, options, page, qs, redirect
from p2w_runtime.demo.sites._places import SAME_DAY_ZIPS
from p2w_runtime.demo.sites._product_data import BASKET, THREADS
from p2w_runtime.demo.sites._products import (
    RATING_STEPS,
    SORTS,
    Product,
    ProductQuery,
    categories,
    product,
    reviews,
    search,
)
from p2w_runtime.demo.sites._state import CartLine

_DELIVERY = {
    BASKET: {"same-day": "Same-day delivery", "standard": "Standard delivery (2-4 days)", "pickup": "Store pickup"},
    THREADS: {"standard": "Standard shipping (3-5 days)", "express": "Express shipping (1-2 days)"},
}


def _delivery_options(ctx: Ctx) -> dict[str, str]:
    offered = dict(_DELIVERY[ctx.site.host])
    if "same-day" in offered and ctx.session.zip not in SAME_DAY_ZIPS:
        del offered["same-day"]
    return offered


def _nav(ctx: Ctx) -> list[tuple[str, str]]:
    count = sum(line.qty for line in ctx.session.cart(ctx.site.host))
    where = f"Deliver to {ctx.session.zip}" if ctx.session.zip else "Set delivery ZIP"
    return [("/search", "All products"), ("/cart", f"Cart ({count})"), ("/#location", where)]


def _search_form(ctx: Ctx, query: ProductQuery) -> str:
    cats = [("", "All departments")] + [(c.slug, c.label) for c in categories(ctx.site.host)]
    specs = [c for c in categories(ctx.site.host) if not query.category or c.slug == query.category]
    sizes = [("", "Any size")] + [(s, s) for s in dict.fromkeys(s for c in specs for s in c.sizes)]
    ratings = [("", "Any rating")] + [(f"{r:g}", f"{r:g} stars & up") for r in RATING_STEPS]
    max_price = "" if query.max_price is None else f"{query.max_price:g}"
    min_rating = "" if query.min_rating is None else f"{query.min_rating:g}"
    return (
        '<form action="/search" method="get" role="search">'
        f'<label>Search products <input type="search" name="q" value="{esc(query.q)}"></label> '
        f'<label>Department <select name="category">{options(cats, query.category)}</select></label> '
        f'<label>Size <select name="size">{options(sizes, query.size)}</select></label> '
        f'<label>Customer rating <select name="min_rating">{options(ratings, min_rating)}</select></label> '
        f'<label>Max price ($) <input type="number" name="max_price" min="0" step="0.01" value="{esc(max_price)}">'
        f'</label> <label>Sort by <select name="sort">{options(SORTS.items(), query.sort)}</select></label> '
        '<button type="submit">Search</button></form>'
    )


def _location_form(ctx: Ctx) -> str:
    return (
        '<form id="location" action="/location" method="post"><label>Delivery ZIP code '
        f'<input name="zip" inputmode="numeric" value="{esc(ctx.session.zip)}"></label> '
        '<button type="submit">Update location</button></form>'
    )


async def home(ctx: Ctx) -> web.Response:
    cats = "".join(
        f'<li><a href="/search{qs(category=c.slug)}">{esc(c.label)}</a></li>' for c in categories(ctx.site.host)
    )
    body = f"<p>{esc(ctx.site.tagline)}.</p>{_search_form(ctx, ProductQuery())}{_location_form(ctx)}"
    return page(ctx, f"Welcome to {ctx.site.name}", body + f"<h2>Departments</h2><ul>{cats}</ul>", nav=_nav(ctx))


async def results(ctx: Ctx) -> web.Response:
    query = ProductQuery.from_params(ctx.params)
    hits = search(ctx.site.host, query)
    items = "".join(
        f'<div class="item" data-product-id="{p.id}"><a href="/product/{p.id}">{esc(p.name)}</a><br>'
        f"{money(p.price)} · {p.rating:.1f} out of 5 stars ({p.review_count:,} reviews)"
        + (f" · Sizes: {esc(', '.join(p.sizes))}" if p.sizes else "")
        + "</div>"
        for p in hits[:60]
    )
    summary = f'<p role="status">{len(hits)} result{"s" if len(hits) != 1 else ""}'
    summary += f" for “{esc(query.q)}”</p>" if query.q else "</p>"
    body = _search_form(ctx, query) + summary + (items or "<p>No products match these filters.</p>")
    return page(ctx, "Search results", body, nav=_nav(ctx))


def _delivery_note(ctx: Ctx) -> str:
    if not ctx.session.zip:
        return '<p class="muted">Enter your ZIP code to see delivery options.</p>'
    offered = ", ".join(_delivery_options(ctx).values())
    return f"<p>Delivering to {esc(ctx.session.zip)}: {esc(offered)}.</p>"


def _structured(ctx: Ctx, p: Product, revs: list[tuple[str, int, str]]) -> str:
    """schema.org Product data, as real shops embed it: what AgenticShop's rule-based extractor reads.

    It says what the visible page says (delivery for the session's ZIP only), so the two never disagree.
    """
    shipping = (
        ", ".join(_delivery_options(ctx).values()) if ctx.session.zip else "Enter a ZIP code for delivery options"
    )
    details = [("Color", p.color), ("Features", ", ".join(p.tags)), ("Available sizes", ", ".join(p.sizes))]
    data = {
        "@context": "https://schema.org",
        "@type": "Product",
        "sku": p.id,
        "name": p.name,
        "brand": {"@type": "Brand", "name": p.brand},
        "category": next((c.label for c in categories(p.host) if c.slug == p.category), p.category),
        "description": f"{p.name} by {p.brand}" + (f". Features: {', '.join(p.tags)}" if p.tags else ""),
        "additionalProperty": [{"@type": "PropertyValue", "name": n, "value": v} for n, v in details if v],
        "offers": {
            "@type": "Offer",
            "price": f"{p.price:.2f}",
            "priceCurrency": "USD",
            "seller": {"@type": "Organization", "name": ctx.site.name},
            "shippingDetails": {"description": shipping},
            "hasMerchantReturnPolicy": {"description": "Free returns and size exchanges within 30 days"},
        },
        "aggregateRating": {"@type": "AggregateRating", "ratingValue": p.rating, "reviewCount": p.review_count},
        "review": [
            {"@type": "Review", "author": who, "reviewRating": {"ratingValue": stars}, "reviewBody": text}
            for who, stars, text in revs
        ],
    }
    text = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
    return f'<script type="application/ld+json">{text}</script>'


async def product_page(ctx: Ctx, pid: str) -> web.Response:
    p = product(ctx.site.host, pid)
    if p is None:
        return page(ctx, "Product not found", f"<p>No product {esc(pid)}.</p>", nav=_nav(ctx), status=404)
    if len(p.sizes) > 1:
        choices = options([("", "Choose a size")] + [(s, s) for s in p.sizes], "")
        size = f'<label>Size <select name="size">{choices}</select></label> '
    else:
        size = hidden(size=p.sizes[0]) if p.sizes else ""
    written = reviews(p)
    revs = "".join(
        f'<div class="item"><strong>{stars} out of 5 stars</strong> by {esc(who)}<br>{esc(text)}</div>'
        for who, stars, text in written
    )
    tags = ", ".join(p.tags)
    body = (
        f"<p><strong>{money(p.price)}</strong></p><p>{p.rating:.1f} out of 5 stars · {p.review_count:,} reviews</p>"
        f"<p>Brand: {esc(p.brand)}"
        + (f" · Color: {esc(p.color)}" if p.color else "")
        + "</p>"
        + (f"<p>Features: {esc(tags)}</p>" if tags else "")
        + (f"<p>Available sizes: {esc(', '.join(p.sizes))}</p>" if p.sizes else "")
        + _delivery_note(ctx)
        + f'<form action="/cart/add" method="post">{hidden(product_id=p.id)}{size}'
        '<label>Quantity <input type="number" name="qty" value="1" min="1" max="10"></label> '
        '<button type="submit">Add to cart</button></form>' + _location_form(ctx) + f"<h2>Customer reviews</h2>{revs}"
        "<p>Free returns and size exchanges within 30 days.</p>" + _structured(ctx, p, written)
    )
    return page(ctx, p.name, body, nav=_nav(ctx))


async def set_location(ctx: Ctx) -> web.Response:
    form = await ctx.form()
    ctx.session.zip = "".join(ch for ch in form.get("zip", "") if ch.isdigit())[:5]
    if ctx.session.delivery.get(ctx.site.host) not in _delivery_options(ctx):
        ctx.session.delivery.pop(ctx.site.host, None)
    back = ctx.request.headers.get("Referer", "/")
    return redirect(back if back.startswith(("/", "http://" + ctx.request.host)) else "/")


async def add_to_cart(ctx: Ctx) -> web.Response:
    form = await ctx.form()
    p = product(ctx.site.host, form.get("product_id", ""))
    if p is None:
        return page(ctx, "Product not found", "<p>That product does not exist.</p>", nav=_nav(ctx), status=404)
    size = form.get("size", "") or (p.sizes[0] if len(p.sizes) == 1 else "")
    if p.sizes and size not in p.sizes:
        body = f'<p role="alert">Please choose a size.</p><p><a href="/product/{p.id}">Back to {esc(p.name)}</a></p>'
        return page(ctx, "Choose a size", body, nav=_nav(ctx), status=400)
    qty = max(1, min(10, int(form["qty"]) if form.get("qty", "").isdigit() else 1))
    cart = ctx.session.cart(ctx.site.host)
    line = next((line for line in cart if line.product_id == p.id and line.size == size), None)
    if line:
        line.qty = min(10, line.qty + qty)
    else:
        cart.append(CartLine(p.id, size, qty))
    return redirect("/cart")


def _cart_lines(ctx: Ctx) -> tuple[str, float]:
    rows, total = [], 0.0
    for index, line in enumerate(ctx.session.cart(ctx.site.host)):
        p = product(ctx.site.host, line.product_id)
        if p is None:  # only products of this shop are ever put in its cart
            continue
        total += p.price * line.qty
        size = f" · Size {esc(line.size)}" if line.size else ""
        rows.append(
            f'<div class="item" data-product-id="{p.id}"><a href="/product/{p.id}">{esc(p.name)}</a>{size} · '
            f"Qty {line.qty} · {money(p.price * line.qty)} "
            f'<form class="inline" action="/cart/remove" method="post">{hidden(line=index)}'
            '<button type="submit">Remove</button></form></div>'
        )
    return "".join(rows), total


async def cart_page(ctx: Ctx) -> web.Response:
    rows, total = _cart_lines(ctx)
    if not rows:
        return page(
            ctx, "Your cart", '<p>Your cart is empty.</p><p><a href="/search">Browse products</a></p>', nav=_nav(ctx)
        )
    chosen = ctx.session.delivery.get(ctx.site.host, "")
    radios = "".join(
        f'<label><input type="radio" name="delivery" value="{k}"{" checked" if k == chosen else ""}> '
        f"{esc(v)}</label><br>"
        for k, v in _delivery_options(ctx).items()
    )
    body = (
        f"{rows}<p>Subtotal: <strong>{money(total)}</strong></p>{_delivery_note(ctx)}{_location_form(ctx)}"
        f'<form action="/cart/delivery" method="post"><fieldset><legend>Delivery option</legend>{radios}'
        '</fieldset><button type="submit">Save delivery option</button></form>'
        '<p><a href="/checkout">Proceed to checkout</a></p>'
    )
    return page(ctx, "Your cart", body, nav=_nav(ctx))


async def set_delivery(ctx: Ctx) -> web.Response:
    choice = (await ctx.form()).get("delivery", "")
    if choice in _delivery_options(ctx):
        ctx.session.delivery[ctx.site.host] = choice
    return redirect("/cart")


async def remove_line(ctx: Ctx) -> web.Response:
    cart = ctx.session.cart(ctx.site.host)
    index = (await ctx.form()).get("line", "")
    if index.isdigit() and int(index) < len(cart):
        del cart[int(index)]
    return redirect("/cart")


async def checkout(ctx: Ctx) -> web.Response:
    rows, total = _cart_lines(ctx)
    if not rows:
        return redirect("/cart")
    delivery = _delivery_options(ctx).get(ctx.session.delivery.get(ctx.site.host, ""), "not chosen")
    body = (
        f"<h2>Order summary</h2>{rows}<p>Total: <strong>{money(total)}</strong></p>"
        f"<p>Ship to ZIP: {esc(ctx.session.zip or 'not set')}</p><p>Delivery: {esc(delivery)}</p>"
        '<p class="banner">Review your order. Pressing “Place order” charges your saved card.</p>'
        f'<form action="/checkout/place" method="post">{hidden(total=f"{total:.2f}")}'
        f'<button type="submit" {FINAL}>Place order</button></form>'
    )
    return page(ctx, "Checkout", body, nav=_nav(ctx))


async def place_order(ctx: Ctx) -> web.Response:
    form = await ctx.form()
    lines = [f"{line.product_id}:{line.size}:{line.qty}" for line in ctx.session.cart(ctx.site.host)]
    ctx.state.confirm(ctx.site.host, "place_order", ctx.session, {**form, "lines": ",".join(lines)})
    ctx.session.cart(ctx.site.host).clear()
    return page(ctx, "Order placed", "<p>Thank you, your order has been placed.</p>", nav=_nav(ctx))


ROUTES = (
    ("GET", "/", home),
    ("GET", "/search", results),
    ("GET", "/product/{pid}", product_page),
    ("POST", "/location", set_location),
    ("POST", "/cart/add", add_to_cart),
    ("GET", "/cart/add", bot_wall),  # the cart changes only through the product page's form; a typed URL is a bot
    ("GET", "/cart", cart_page),
    ("POST", "/cart/delivery", set_delivery),
    ("POST", "/cart/remove", remove_line),
    ("GET", "/checkout", checkout),
    ("POST", "/checkout/place", place_order),
)
