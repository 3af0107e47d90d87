"""The bundled demo websites (search engine, two shops, restaurant booking, event tickets) on 127.0.0.1.

Hostnames come from ``catalog``; Chromium reaches them via ``host_resolver_rules(port)``.
"""

from p2w_runtime.sites._app import build_app
from p2w_runtime.sites._html import FINAL as FINAL_CONFIRMATION_ATTR
from p2w_runtime.sites._server import RunningSites, SitesError, start_sites
from p2w_runtime.sites._state import Confirmation
from p2w_runtime.sites.catalog import SITE_HOSTS, SITES, DemoSite, host_resolver_rules, start_url

__all__ = [
    "FINAL_CONFIRMATION_ATTR",
    "SITES",
    "SITE_HOSTS",
    "Confirmation",
    "DemoSite",
    "RunningSites",
    "SitesError",
    "build_app",
    "host_resolver_rules",
    "start_sites",
    "start_url",
]
