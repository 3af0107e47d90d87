"""A small aiohttp site for the browser tests: forms, tabs, a hanging page, blocks, cookies and auth to scrub."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from aiohttp import web

SECRET_COOKIE = "cookie-SECRET-4f9a"
SECRET_TOKEN = "token-SECRET-77c1"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def html(title: str, body: str, status: int = 200) -> web.Response:
    return web.Response(
        text=f"<html><head><title>{title}</title></head><body>{body}</body></html>",
        content_type="text/html",
        status=status,
    )


_LINKS = '<a href="/page2">Second page</a> <a href="/form" target="_blank">Form in new tab</a>'
STATIC_PAGES: dict[str, tuple[str, str, int]] = {
    "/": ("Index", f'<h1>Index</h1>{_LINKS} <a href="/hang">Slow page</a>', 200),
    "/page2": ("Page two", "<h1>Page two</h1><p>nothing here</p>", 200),
    "/form": (
        "Search form",
        """<form method="post" action="/search">
        <label>Query <input name="q"></label> <button type="submit">Search</button></form>
        <label>Size <select name="size">
          <option value="s">Small</option><option value="m">Medium</option></select></label>""",
        200,
    ),
    "/long": (
        "Long",
        "<button>Top button</button>"
        + "".join(f"<p>Row number {i}</p>" for i in range(80))
        + "<button>Bottom button</button>",
        200,
    ),
    "/hover": ("Hover", """<button onmouseover="this.textContent='Hovered now'">Hover me</button>""", 200),
    "/checkout": (
        "Checkout",
        """<form method="post" action="/confirm"><label>Note <input name="note"></label>
          <button type="submit" data-final-confirmation="true">Place order</button></form>
        <button onclick="document.querySelector('[data-final-confirmation]').click()">Quick buy</button>
        <form method="post" action="/subscribe"><label>Email <input name="email"></label>
          <button type="submit">Subscribe</button></form>""",
        200,
    ),
    "/captcha": ("Access denied", "<p>Please solve the CAPTCHA to continue.</p>", 403),
    "/robot": ("Shop", "<h2>Are you a robot?</h2><p>Complete the check below.</p>", 200),
}


@dataclass
class Site:
    """The test site; records what the server received so tests can check what the browser really sent."""

    base: str = ""
    searches: list[str] = field(default_factory=list)
    confirmations: list[str] = field(default_factory=list)
    unmarked_submissions: list[str] = field(default_factory=list)
    cookies_seen: list[str] = field(default_factory=list)
    release: asyncio.Event = field(default_factory=asyncio.Event)

    def app(self) -> web.Application:
        app = web.Application()
        for path in STATIC_PAGES:
            app.router.add_get(path, self.static)
        for path, handler in {"/hang": self.hang, "/login": self.login, "/account": self.account}.items():
            app.router.add_get(path, handler)
        for path, handler in {"/api": self.api, "/host": self.host}.items():
            app.router.add_get(path, handler)
        app.router.add_post("/search", self.search)
        app.router.add_post("/confirm", self.confirm)
        app.router.add_post("/subscribe", self.subscribe)
        return app

    async def static(self, request: web.Request) -> web.Response:
        return html(*STATIC_PAGES[request.path])

    async def search(self, request: web.Request) -> web.Response:
        query = (await request.post())["q"]
        self.searches.append(str(query))
        return html("Results", f"<h1>Results for {query}</h1>")

    async def confirm(self, request: web.Request) -> web.Response:
        self.confirmations.append(str((await request.post()).get("note", "")))
        return html("Order placed", "<h1>Thank you for your order</h1>")

    async def subscribe(self, request: web.Request) -> web.Response:
        self.unmarked_submissions.append(str((await request.post())["email"]))
        return html("Subscribed", "<h1>Subscribed</h1>")

    async def hang(self, request: web.Request) -> web.Response:
        await self.release.wait()
        return html("Late", "late")

    async def login(self, request: web.Request) -> web.Response:
        response = html("Logged in", '<a href="/account">My account</a>')
        response.set_cookie("session", SECRET_COOKIE)
        return response

    async def account(self, request: web.Request) -> web.Response:
        self.cookies_seen.append(request.cookies.get("session", ""))
        script = (
            f"fetch('/api', {{headers: {{Authorization: 'Bearer {SECRET_TOKEN}'}}}}).then(r => r.text())"
            ".then(t => document.getElementById('api').textContent = t)"
        )
        return html("Account", f'<p id="api">loading</p><script>{script}</script>')

    async def api(self, request: web.Request) -> web.Response:
        ok = request.headers.get("Authorization") == f"Bearer {SECRET_TOKEN}"
        return web.Response(text="api ok" if ok else "api refused")

    async def host(self, request: web.Request) -> web.Response:
        return html(f"Host {request.host}", f"<p>served for {request.host}</p>")
