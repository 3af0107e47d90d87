"""`sites serve`: the bundled demo websites, served alone for a person to browse."""

from __future__ import annotations

import asyncio

import click

from p2w_cli._common import run


@click.group()
def sites() -> None:
    """The bundled demo websites (*.p2w.test) the sample tasks run on."""


@sites.command("serve")
@click.option("--port", default=8642, show_default=True, type=click.IntRange(0, 65535), help="0 picks a free port.")
def sites_serve(port: int) -> None:
    """Serve the demo sites on 127.0.0.1 until Ctrl-C, and print how to open them in Chromium."""
    from p2w_runtime.demo.sites import SITE_HOSTS, start_sites

    async def _serve() -> None:
        running = await start_sites(port)
        try:
            rules = running.host_resolver_rules.partition("=")[2]
            click.echo(f"demo sites on 127.0.0.1:{running.port}: " + ", ".join(f"http://{h}/" for h in SITE_HOSTS))
            click.echo(f'open them with: chromium --host-resolver-rules="{rules}" {running.start_url}')
            click.echo(f"final confirmations pressed: {running.control_url}/_p2w/confirmations  (Ctrl-C stops)")
            await asyncio.Event().wait()
        finally:
            await running.stop()

    run(_serve())
