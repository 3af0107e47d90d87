"""The bundled demo websites (search engine, two shops, restaurant booking, event tickets) on 127.0.0.1.

Hostnames come from ``catalog``; Chromium reaches them via ``catalog.host_resolver_rules(port)``.
"""

from p2w_runtime.sites._server import RunningSites, SitesError, start_sites
from p2w_runtime.sites.catalog import SITE_HOSTS

__all__ = [
    "SITE_HOSTS",
    "RunningSites",
    "SitesError",
    "start_sites",
]
