"""The demo sites as ``record``'s ``SiteHosting``: started only when a task starts on one of them."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from p2w_runtime.demo.sites._server import start_sites
from p2w_runtime.demo.sites.catalog import TEST_DOMAIN, host_resolver_rules

if TYPE_CHECKING:  # the agent package loads Chromium's driver; the sites need only the type
    from p2w_runtime.agent import StartsAt


class DemoHosting:
    """Serves the bundled demo sites on a free port of 127.0.0.1 and points Chromium's resolver at them."""

    @contextlib.asynccontextmanager
    async def serving(self, tasks: Sequence[StartsAt]) -> AsyncIterator[list[str]]:
        if not any((urlsplit(t.start_url).hostname or "").endswith(f".{TEST_DOMAIN}") for t in tasks):
            yield []
            return
        sites = await start_sites(0)
        try:
            yield [host_resolver_rules(sites.port)]
        finally:
            await sites.stop()
