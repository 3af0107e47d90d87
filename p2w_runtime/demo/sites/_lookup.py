"""Lookup, the demo search engine every sample task starts on: which demo site has what you asked for.

It ranks sites by the query's words against each site's keywords and its items (products,
restaurants, events), and links both to the site and straight to the best matching items.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from aiohttp import web

from p2w_runtime.demo.sites import _events, _products, _restaurants
from p2w_runtime.demo.sites._html import Ctx, esc, page, qs
from p2w_runtime.demo.sites._places import CITIES
from p2w_runtime.demo.sites._text import tokens
from p2w_runtime.demo.sites.catalog import SITES, DemoSite


@dataclass(frozen=True)
class _Item:
    title: str
    path: str
    words: frozenset[str]
    popularity: int


@cache
def _items(host: str) -> tuple[_Item, ...]:
    kind = next(s.kind for s in SITES if s.host == host)
    if kind == "shop":
        return tuple(_Item(p.name, f"/product/{p.id}", p.words, p.review_count) for p in _products.catalog(host))
    if kind == "restaurants":
        return tuple(
            _Item(f"{r.name} ({r.cuisine}, {r.city})", f"/restaurant/{r.id}", frozenset(r.words), r.review_count)
            for r in _restaurants.restaurants()
        )
    return tuple(
        _Item(f"{e.title} ({e.genre}, {e.city})", f"/event/{e.id}", frozenset(e.words), 0) for e in _events.events()
    )


def _site_words(site: DemoSite) -> set[str]:
    return tokens(" ".join((site.name, *site.keywords)))


def _see_all(site: DemoSite, q: str, wanted: set[str]) -> str:
    """The site's own result page for the query's words it understands (city, cuisine, genre or product words)."""
    city = next((c.name for c in CITIES if tokens(c.name) <= wanted), "")
    if site.kind == "shop":
        words = [w for w in re.findall(r"[\w'-]+", q) if tokens(w) and tokens(w) <= wanted - _site_words(site)]
        return "/search" + qs(q=" ".join(words))
    if site.kind == "restaurants":
        cuisine = next((c for c in _restaurants.CUISINES if c.lower() in wanted), "")
        return "/search" + qs(city=city, cuisine=cuisine) if city else "/"
    genre = next((g for g in _events.GENRES if tokens(g) <= wanted), "")
    return "/search" + qs(city=city, genre=genre)


def rank(q: str) -> list[tuple[DemoSite, list[_Item], str]]:
    """Sites that match the query, best first, each with its top items and its own result-page path."""
    wanted = tokens(q)
    ranked = []
    for site in SITES:
        if site.kind == "search" or not wanted:
            continue
        content = wanted - _site_words(site)
        items = sorted(_items(site.host), key=lambda i: (-len(content & i.words), -i.popularity, i.title))
        best = len(content & items[0].words) if items and content else 0
        score = (2 * len(wanted & _site_words(site)) + best, sum(len(content & i.words) == best for i in items))
        if score[0]:
            ranked.append((score, site, [i for i in items[:4] if content & i.words], _see_all(site, q, wanted)))
    ranked.sort(key=lambda row: (-row[0][0], -row[0][1], row[1].host))
    return [(site, items, path) for _, site, items, path in ranked]


def _directory(ctx: Ctx) -> str:
    rows = "".join(
        f'<li><a href="{esc(ctx.url(s.host))}">{esc(s.name)}</a> ({esc(s.host)}): {esc(s.tagline)}</li>'
        for s in SITES
        if s.kind != "search"
    )
    return f"<h2>Directory of sites</h2><ul>{rows}</ul>"


def _box(q: str) -> str:
    return (
        '<form action="/search" method="get" role="search"><label>Search the web '
        f'<input type="search" name="q" value="{esc(q)}"></label> <button type="submit">Search</button></form>'
    )


async def home(ctx: Ctx) -> web.Response:
    return page(ctx, "Lookup", _box("") + _directory(ctx))


async def results(ctx: Ctx) -> web.Response:
    q = ctx.params.get("q", "").strip()
    blocks = []
    for site, items, path in rank(q):
        links = "".join(f'<li><a href="{esc(ctx.url(site.host, i.path))}">{esc(i.title)}</a></li>' for i in items)
        blocks.append(
            f'<div class="item" data-site="{esc(site.host)}"><a href="{esc(ctx.url(site.host))}">'
            f"<strong>{esc(site.name)}</strong></a> · {esc(site.host)}<br>{esc(site.tagline)}<br>"
            f'<a href="{esc(ctx.url(site.host, path))}">See results on {esc(site.name)}</a>'
            + (f"<ul>{links}</ul>" if links else "")
            + "</div>"
        )
    found = "".join(blocks) or f"<p>No results for “{esc(q)}”.</p>"
    return page(ctx, f"Results for {q}" if q else "Lookup", _box(q) + found + _directory(ctx))


ROUTES = (("GET", "/", home), ("GET", "/search", results))
