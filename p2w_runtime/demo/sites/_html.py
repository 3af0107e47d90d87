"""Request context and the few HTML building blocks every demo page shares.

Pages are plain server-rendered HTML with real forms and labels, so an agent working from the
accessibility tree sees named fields and buttons, and every result page is reachable by URL.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from html import escape
from urllib.parse import urlencode, urlsplit

from aiohttp import web
from multidict import MultiMapping

from p2w_runtime.demo.sites._state import Session, SitesState
from p2w_runtime.demo.sites.catalog import DemoSite, base_url

FINAL = 'data-final-confirmation="true"'
"""Marks the one button per flow that would commit (order, reservation, tickets); the agent must not press it."""

_STYLE = """body{font-family:sans-serif;margin:0;color:#222}header{background:#1d3557;color:#fff;padding:.6em 1em}
header a{color:#fff;margin-right:1em}main{padding:1em;max-width:60em}.item{border-bottom:1px solid #ddd;padding:.6em 0}
.muted{color:#666}form.inline{display:inline}fieldset{border:1px solid #ccc;margin:.5em 0}.banner{background:#fff3cd;
padding:.5em}"""


@dataclass
class Ctx:
    request: web.Request
    site: DemoSite
    state: SitesState
    session: Session

    def url(self, host: str, path: str = "/") -> str:
        """Absolute link to another demo site, keeping the port only if the browser used one."""
        _, _, port = self.request.host.partition(":")
        return base_url(host, int(port) if port.isdigit() else None) + path

    @property
    def params(self) -> MultiMapping[str]:
        return self.request.query

    async def form(self) -> dict[str, str]:
        data = await self.request.post()
        return {key: str(value) for key, value in data.items()}


def esc(value: object) -> str:
    return escape(str(value), quote=True)


def money(value: float) -> str:
    return f"${value:,.2f}"


def qs(**params: object) -> str:
    """A query string of the non-empty parameters (so links stay short and filters visible)."""
    kept = {k: v for k, v in params.items() if v not in ("", None)}
    return "?" + urlencode(kept) if kept else ""


def options(values: Iterable[tuple[str, str]], selected: str) -> str:
    return "".join(
        f'<option value="{esc(v)}"{" selected" if v == selected else ""}>{esc(label)}</option>' for v, label in values
    )


def hidden(**fields: object) -> str:
    return "".join(f'<input type="hidden" name="{esc(k)}" value="{esc(v)}">' for k, v in fields.items())


def page(ctx: Ctx, title: str, body: str, *, nav: Iterable[tuple[str, str]] = (), status: int = 200) -> web.Response:
    links = "".join(f'<a href="{esc(href)}">{esc(label)}</a>' for href, label in nav)
    home = f'<a href="/"><strong>{esc(ctx.site.name)}</strong></a>'
    full_title = title if title == ctx.site.name else f"{title} | {ctx.site.name}"
    html = (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{esc(full_title)}</title>'
        f"<style>{_STYLE}</style></head><body><header><nav>{home}{links}</nav></header>"
        f"<main><h1>{esc(title)}</h1>{body}</main></body></html>"
    )
    return web.Response(text=html, content_type="text/html", status=status)


def redirect(location: str) -> web.Response:
    """A 303 after a POST, returned (not raised) so the session middleware can still set its cookie."""
    return web.Response(status=303, headers={"Location": location})


def from_this_site(ctx: Ctx) -> bool:
    """Whether the request came from a page of this site (its ``Referer``), as a click or a form on it does.

    The booking and ticket flows check it on their transactional pages: a URL typed straight into the browser
    (an agent's ``goto`` to a link it copied or guessed) meets the bot wall instead, as on sites with bot protection.
    """
    referer = urlsplit(ctx.request.headers.get("Referer", ""))
    return (referer.hostname or "") == ctx.site.host


async def bot_wall(ctx: Ctx) -> web.Response:
    """A CAPTCHA interstitial with 403, like the bot walls real sites put in front of agents."""
    body = (
        '<p role="alert">Access denied. We detected unusual traffic from your network.</p>'
        "<p>Please verify you are human to continue.</p>"
        '<form><label><input type="checkbox" name="captcha"> I\'m not a robot</label> '
        '<button type="button">Verify</button></form><p class="muted">Reference #CAPTCHA-403</p>'
    )
    return page(ctx, "Verify you are human", body, status=403)
