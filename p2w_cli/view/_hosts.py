"""The names a viewer on a loopback address answers to.

A web page can make its own host name resolve to 127.0.0.1 (DNS rebinding): the browser then sends the page's
requests to the viewer as same-origin requests, and the page reads every run and the label form's token, and posts
labels. Such requests name the page's host in ``Host``, so a viewer bound to a loopback address serves only requests
naming a loopback host (``127.0.0.1``, ``[::1]``, ``localhost``) and refuses the rest in one line that tells nothing
of the store.
"""

from __future__ import annotations

import ipaddress

from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from p2w_cli.view._json import as_json


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or address, as ``--host`` takes it or ``Host`` sends it without its port) names this
    machine's loopback interface only: ``localhost`` or a loopback address."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """A ``Host`` header's host without its port: ``[::1]:8000`` -> ``::1``, ``localhost:8000`` -> ``localhost``."""
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rpartition(":")[0] if header.count(":") == 1 else header


class LoopbackOnly:
    """ASGI middleware: an HTTP request whose ``Host`` names another host is a 403 (JSON under ``/api/``); a request
    without ``Host`` (no browser sends one) is served."""

    def __init__(self, app: ASGIApp, headers: dict[str, str]) -> None:
        self.app = app
        self.headers = headers
        """The refusal's security headers (the viewer's pages' own)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        host = Headers(scope=scope).get("host") if scope["type"] == "http" else None
        if host is None or is_loopback(host_name(host)):
            await self.app(scope, receive, send)
            return
        message = (
            f"Host {host[:80]!r} is not this viewer's: it answers to its loopback address only "
            "(127.0.0.1, [::1] or localhost, as p2w-rt view printed it)"
        )
        if str(scope.get("path", "")).startswith("/api/"):
            body, media = as_json({"error": "Not available", "message": message}), "application/json"
        else:
            body, media = message.encode() + b"\n", "text/plain; charset=utf-8"
        await Response(body, 403, headers=self.headers, media_type=media)(scope, receive, send)
