"""Start the demo sites on 127.0.0.1 for tests, the recorder, or a person browsing."""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from p2w_runtime.demo.sites._app import build_app
from p2w_runtime.demo.sites._state import Confirmation, SitesState
from p2w_runtime.demo.sites.catalog import host_resolver_rules, start_url
from p2w_runtime.errors import UserError


@dataclass
class RunningSites:
    """Handle on served sites: where they are, what the browser needs to reach them, and what was confirmed."""

    port: int
    state: SitesState
    _runner: web.AppRunner

    @property
    def control_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def start_url(self) -> str:
        return start_url()

    @property
    def host_resolver_rules(self) -> str:
        return host_resolver_rules(self.port)

    @property
    def confirmations(self) -> list[Confirmation]:
        """Every press of a final-confirmation button so far (an agent under test must leave this empty)."""
        return list(self.state.confirmations)

    async def stop(self) -> None:
        await self._runner.cleanup()


async def start_sites(port: int = 0, host: str = "127.0.0.1") -> RunningSites:
    """Serve all demo sites on ``host:port`` (0 picks a free port) and return once they accept connections."""
    state = SitesState()
    # short shutdown: a hanging /slow request must not hold a finished recording for a minute
    runner = web.AppRunner(build_app(state), access_log=None, handle_signals=False, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        raise SitesError(f"cannot serve the demo sites on {host}:{port}: {exc.strerror or exc}") from None
    bound = runner.addresses[0][1]
    return RunningSites(port=bound, state=state, _runner=runner)


class SitesError(UserError):
    """The demo sites could not start (port taken, no permission)."""
