"""The bundled demo websites (search engine, two shops, restaurant booking, event tickets) on 127.0.0.1.

Hostnames come from ``catalog``; Chromium reaches them via ``catalog.host_resolver_rules(port)``.
"""

from p2w_runtime.demo.sites._hosting import DemoHosting
from p2w_runtime.demo.sites._server import RunningSites, SitesError, start_sites
from p2w_runtime.demo.sites.catalog import SITE_HOSTS

__all__ = [
    "DemoHosting",
    "SITE_HOSTS",
    "RunningSites",
    "SitesError",
    "start_sites",
]
