"""The names of the bundled demo websites: the one list the sites, the sample tasks and the agent share.

All hosts live under ``p2w.test`` (``.test`` is reserved by RFC 2606, so nothing real can answer).
Chromium reaches them through ``--host-resolver-rules``: a ``MAP`` rule with a port sends the
connection for ``threads.p2w.test`` to ``127.0.0.1:PORT`` while the page URL stays
``http://threads.p2w.test/`` (no port) and the request keeps ``Host: threads.p2w.test``.
Every other hostname is left alone, so it still fails to resolve offline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

TEST_DOMAIN = "p2w.test"

SiteKind = Literal["search", "shop", "restaurants", "events"]


@dataclass(frozen=True)
class DemoSite:
    """One demo website; ``keywords`` are what the search start page matches besides the site's own items."""

    host: str
    kind: SiteKind
    name: str
    tagline: str
    location_aware: bool
    keywords: tuple[str, ...]


SITES: tuple[DemoSite, ...] = (
    DemoSite(
        host=f"search.{TEST_DOMAIN}",
        kind="search",
        name="Lookup",
        tagline="Search the demo web",
        location_aware=False,
        keywords=("search", "web", "directory"),
    ),
    DemoSite(
        host=f"threads.{TEST_DOMAIN}",
        kind="shop",
        name="Threads",
        tagline="Clothing, activewear and shoes",
        location_aware=True,
        keywords=("clothing", "clothes", "apparel", "fashion", "activewear", "shoes", "sneakers", "outdoor", "wear"),
    ),
    DemoSite(
        host=f"basket.{TEST_DOMAIN}",
        kind="shop",
        name="Basket",
        tagline="Groceries, household, electronics and everyday basics, delivered",
        location_aware=True,
        keywords=("grocery", "groceries", "food", "delivery", "household", "electronics", "audio", "basics", "store"),
    ),
    DemoSite(
        host=f"tablefor.{TEST_DOMAIN}",
        kind="restaurants",
        name="TableFor",
        tagline="Restaurant reservations",
        location_aware=True,
        keywords=("restaurant", "restaurants", "reservation", "table", "dinner", "lunch", "brunch", "dining", "book"),
    ),
    DemoSite(
        host=f"stagepass.{TEST_DOMAIN}",
        kind="events",
        name="StagePass",
        tagline="Tickets for concerts, comedy and shows",
        location_aware=True,
        keywords=("tickets", "ticket", "concert", "concerts", "events", "show", "shows", "comedy", "live", "music"),
    ),
)

SITE_HOSTS: tuple[str, ...] = tuple(site.host for site in SITES)
SEARCH_HOST = SITES[0].host
SITES_BY_HOST: dict[str, DemoSite] = {site.host: site for site in SITES}


def site(host: str) -> DemoSite:
    """The demo site served under ``host``; ``KeyError`` names the unknown host."""
    try:
        return SITES_BY_HOST[host]
    except KeyError:
        raise KeyError(f"no demo site {host!r}; known: {', '.join(SITE_HOSTS)}") from None


def base_url(host: str, port: int | None = None) -> str:
    """URL root of a demo site; without ``port`` it is the form the browser uses under the resolver rules."""
    return f"http://{host}" if port in (None, 80) else f"http://{host}:{port}"


def start_url(port: int | None = None) -> str:
    """The page every sample task starts on: the demo search engine."""
    return base_url(SEARCH_HOST, port) + "/"


def host_resolver_rules(port: int) -> str:
    """Chromium switch mapping every ``*.p2w.test`` host to the local sites on ``port`` (nothing else)."""
    return f"--host-resolver-rules=MAP *.{TEST_DOMAIN} 127.0.0.1:{port}"
