"""Serving an aiohttp app to an agent process on this machine: the recording proxy and the replay endpoint."""

from __future__ import annotations

from aiohttp import web

MAX_BODY = 64 * 1024**2
"""Largest request body taken (a model call's messages, an episode handed back)."""


async def serve_locally(app: web.Application) -> tuple[web.AppRunner, int]:
    """Start ``app`` on a free port of 127.0.0.1; its runner (``cleanup()`` stops it) and the port."""
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, runner.addresses[0][1]
