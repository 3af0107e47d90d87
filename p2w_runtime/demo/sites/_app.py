"""One aiohttp application for all demo sites: it dispatches on the Host header.

Besides the sites' own pages, every host answers the trouble pages the agent must recognise
(``/slow``, ``/blocked``, ``/error/{code}``). Requests for a host outside ``*.p2w.test``
(e.g. ``127.0.0.1:PORT``) reach the control endpoints tests and the recorder read.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Iterable

from aiohttp import web

from p2w_runtime.demo.sites import _lookup, _shop, _stagepass, _tablefor
from p2w_runtime.demo.sites._html import Ctx, bot_wall, esc, page
from p2w_runtime.demo.sites._state import SESSION_COOKIE, SitesState
from p2w_runtime.demo.sites.catalog import SITES, SITES_BY_HOST, TEST_DOMAIN, DemoSite

Handler = Callable[..., Awaitable[web.StreamResponse]]
STATE_KEY = web.AppKey("p2w_sites_state", SitesState)
MAX_SLOW_SECONDS = 600.0
_KIND_ROUTES = {
    "search": _lookup.ROUTES,
    "shop": _shop.ROUTES,
    "restaurants": _tablefor.ROUTES,
    "events": _stagepass.ROUTES,
}


def _compile(routes: Iterable[tuple[str, str, Handler]]) -> list[tuple[str, re.Pattern[str], Handler]]:
    return [
        (method, re.compile("^" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", path) + "$"), handler)
        for method, path, handler in routes
    ]


_ROUTES = {kind: _compile(routes) for kind, routes in _KIND_ROUTES.items()}


async def _slow(ctx: Ctx) -> web.StreamResponse:
    """A page that takes ``seconds`` to answer: for the agent's navigation timeouts."""
    try:
        seconds = min(max(float(ctx.params.get("seconds", "30")), 0.0), MAX_SLOW_SECONDS)
    except ValueError:
        seconds = 30.0
    await asyncio.sleep(seconds)
    return page(ctx, "Finally loaded", f"<p>This page took {seconds:g} seconds.</p>")


async def _error(ctx: Ctx, code: str) -> web.StreamResponse:
    status = int(code) if code.isdigit() and 400 <= int(code) <= 599 else 500
    return page(
        ctx, f"Error {status}", f"<p>The server answered HTTP {status}. Please try again later.</p>", status=status
    )


_TROUBLE = _compile((("GET", "/slow", _slow), ("GET", "/blocked", bot_wall), ("GET", "/error/{code}", _error)))


async def _control(request: web.Request) -> web.StreamResponse:
    state = request.app[STATE_KEY]
    if request.path == "/_p2w/confirmations":
        return web.json_response([c.as_dict() for c in state.confirmations])
    if request.path in ("/", "/_p2w/sites"):
        return web.json_response({"sites": [s.host for s in SITES], "domain": TEST_DOMAIN})
    raise web.HTTPNotFound(text="control endpoints: /_p2w/sites, /_p2w/confirmations")


def _no_site(host: str) -> web.StreamResponse:
    html = f"<!doctype html><title>Site not found</title><h1>Site not found</h1><p>No demo site at {esc(host)}.</p>"
    return web.Response(text=html, content_type="text/html", status=404)


async def _dispatch(request: web.Request) -> web.StreamResponse:
    host = request.host.partition(":")[0].lower().rstrip(".")
    if not host.endswith("." + TEST_DOMAIN):
        return await _control(request)
    site: DemoSite | None = SITES_BY_HOST.get(host)
    if site is None:
        return _no_site(host)
    state = request.app[STATE_KEY]
    session, created = state.session(request.cookies.get(SESSION_COOKIE))
    ctx = Ctx(request, site, state, session)
    response = await _route(ctx, _TROUBLE + _ROUTES[site.kind])
    if created:
        response.set_cookie(SESSION_COOKIE, session.id, httponly=True, samesite="Lax", path="/")
    return response


async def _route(ctx: Ctx, routes: list[tuple[str, re.Pattern[str], Handler]]) -> web.StreamResponse:
    allowed = []
    for method, pattern, handler in routes:
        match = pattern.match(ctx.request.path)
        if match is None:
            continue
        if method == ctx.request.method or (method == "GET" and ctx.request.method == "HEAD"):
            return await handler(ctx, **match.groupdict())
        allowed.append(method)
    if allowed:
        return page(ctx, "Method not allowed", "<p>Use the links and forms on the page.</p>", status=405)
    return page(ctx, "Page not found", f"<p>No page at {esc(ctx.request.path)}.</p>", status=404)


def build_app(state: SitesState | None = None) -> web.Application:
    """The demo sites as one application; ``state`` is shared so a caller can inspect sessions and confirmations."""
    app = web.Application()
    app[STATE_KEY] = state or SitesState()
    app.router.add_route("*", "/{tail:.*}", _dispatch)
    return app
