"""Is a page on the expected website, and is the website named in a text?

The expected site comes from hand-written task text (``kohls.com``, ``coursera.org.com``,
``sports.yahoo.com``, ``Google Flights.com``), so it is first turned into host names:
scheme, path and ``www.`` dropped, spaces removed (``Google Flights.com`` also stands for
``google-flights.com``, so that "Google Flights" counts as a mention by name), and the benchmark's
recurring typo of a ``.com`` appended to another TLD (``last.fm.com``, ``recreation.gov.com``) also
read without it. A URL is on the site when its host equals one of them or is a subdomain of it;
``m.kohls.com`` is on ``kohls.com`` but ``finance.yahoo.com`` is not on ``sports.yahoo.com`` (and no
demo site on ``*.p2w.test`` is on another).

Some names in the task texts are not a site anyone visits (``Google Flights.com``, ``Map.com``,
``shopping.google.com``): ``SITE_ALIASES`` maps them to where an agent actually lands, and users add
their own (``--site-alias NAME=DOMAIN``). An alias target may carry a path prefix and query
parameters (``google.com/travel/flights``, ``google.com/search?tbm=shop``): a URL is on it when
its host matches, its path starts with that path and it carries those parameters, so a plain
Google search is not Google Flights.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import parse_qsl, urlsplit

_TYPO_TLDS = frozenset({"org", "gov", "fm", "net", "edu", "io", "co", "us", "tv", "ai", "me"})
_MIN_NAME = 4
"""Shorter site names (``aa``, ``koa``, ``nfl``) are too ambiguous to count as a mention by name."""


def host_of(url: str) -> str:
    """Lower-case host without ``www.`` and port; a bare host or ``host/path`` works too."""
    text = url.strip().lower()
    if "://" not in text:
        text = "//" + text
    try:
        host = urlsplit(text).hostname or ""
    except ValueError:
        return ""
    return host.removeprefix("www.")


@lru_cache(maxsize=4096)
def site_hosts(site: str) -> tuple[str, ...]:
    """Host names a written site stands for (``coursera.org.com`` -> ``coursera.org.com``, ``coursera.org``)."""
    host = host_of(site.replace(" ", ""))
    if not host:
        return ()
    hosts = [host]
    if " " in site.strip():
        hosts.append(host_of("-".join(site.split())))
    labels = host.split(".")
    if len(labels) >= 3 and labels[-1] == "com" and labels[-2] in _TYPO_TLDS:
        hosts.append(".".join(labels[:-1]))
    return tuple(dict.fromkeys(h for h in hosts if h))


@lru_cache(maxsize=4096)
def _site_parts(expected: str) -> tuple[str, str, frozenset[tuple[str, str]]]:
    """``host[/path][?query]`` -> host, lower-case path without trailing slash, required query pairs."""
    parts = urlsplit("//" + expected)
    host = (parts.hostname or "").removeprefix("www.")
    return host, parts.path.lower().rstrip("/"), frozenset(parse_qsl(parts.query))


def on_site(url: str, hosts: Iterable[str]) -> str | None:
    """The expected site (a host, or an alias target with path and query) ``url`` is on, or None."""
    host = host_of(url)
    if not host:
        return None
    for expected in hosts:
        want_host, want_path, want_query = _site_parts(expected)
        if not (host == want_host or host.endswith("." + want_host)):
            continue
        if want_path or want_query:
            parts = urlsplit(url.strip() if "://" in url else "//" + url.strip())
            path = parts.path.lower().rstrip("/")
            if want_path and not (path == want_path or path.startswith(want_path + "/")):
                continue
            if not want_query <= set(parse_qsl(parts.query)):
                continue
        return expected
    return None


@dataclass(frozen=True, slots=True)
class SiteMention:
    site: str
    snippet: str
    by_name: bool


@lru_cache(maxsize=4096)
def _mention_patterns(host: str) -> tuple[re.Pattern[str], re.Pattern[str] | None]:
    by_host = re.compile(r"(?<![a-z0-9.-])(?:www\.)?" + re.escape(host) + r"(?![a-z0-9-])")
    bare, path, query = _site_parts(host)
    labels = bare.split(".")
    name = labels[0] if len(labels) == 2 and not (path or query) else ""  # google.com/maps is not named "google"
    by_name = None
    if len(name.replace("-", "")) >= _MIN_NAME:
        parts = [re.escape(p) for p in name.split("-") if p]
        by_name = re.compile(r"(?<![a-z0-9])" + r"[\s-]?".join(parts) + r"(?![a-z0-9])")
    return by_host, by_name


def mentions_site(text: str | None, hosts: Iterable[str]) -> SiteMention | None:
    """A mention of the site in ``text``: its host name, else its name (``Kohl's`` for ``kohls.com``)."""
    if not text:
        return None
    lower = text.lower()
    flat = lower.replace("'", "").replace("\u2019", "")
    for host in hosts:
        by_host, by_name = _mention_patterns(host)
        found = by_host.search(lower)
        if found:
            return SiteMention(
                host, text[found.start() : found.end()] if len(text) == len(lower) else found.group(), False
            )
        if by_name is not None and (found := by_name.search(flat)):
            return SiteMention(host, found.group(), True)
    return None


SITE_ALIASES: Mapping[str, tuple[str, ...]] = {
    "Google Flights.com": ("google.com/travel/flights", "flights.google.com"),
    "Map.com": ("google.com/maps", "maps.google.com"),
    "shopping.google.com": ("google.com/shopping", "google.com/search?tbm=shop", "google.com/search?udm=28"),
}
"""Site names written in Persona2Web's 450 task files that are not where an agent lands -> where it does.

Found by listing every ``At <site>,`` of the real tasks (69 distinct names, ``tests/data/persona2web``):
``Google Flights.com`` (Dakota_Taylor_A) is served at google.com/travel/flights (flights.google.com
redirects there); ``Map.com`` ("At Google.com or Map.com, find the live fastest driving route",
Casey_Williams_B) is Google Maps; ``shopping.google.com`` (Emery_Taylor_A) lands on google.com/shopping or a
Google search in its Shopping tab (``tbm=shop``, ``udm=28``). The ``.com`` typos (``coursera.org.com``) need no
alias: ``site_hosts`` reads them without it. Every other name is the domain itself."""


def alias_target(text: str) -> str:
    """An alias target as ``host[/path][?query]`` (scheme and ``www.`` dropped); ValueError without a domain."""
    raw = text.strip()
    parts = urlsplit(raw if "://" in raw else "//" + raw)
    try:
        host = (parts.hostname or "").removeprefix("www.")
    except ValueError:
        host = ""
    if "." not in host or not re.fullmatch(r"[a-z0-9.-]+", host):
        raise ValueError(f"{text!r} is not a domain (expected e.g. google.com or google.com/travel/flights)")
    path = parts.path.rstrip("/")
    return host + path + (f"?{parts.query}" if parts.query else "")


def site_aliases(*tables: Mapping[str, Iterable[str]]) -> dict[str, tuple[str, ...]]:
    """Alias tables merged under the host each written name stands for (``Google Flights.com`` ->
    ``googleflights.com``), targets normalized; later tables add to earlier ones."""
    merged: dict[str, list[str]] = {}
    for table in tables:
        for name, targets in table.items():
            for host in site_hosts(name)[:1]:
                merged.setdefault(host, []).extend(alias_target(t) for t in targets)
    return {host: tuple(dict.fromkeys(targets)) for host, targets in sorted(merged.items())}


def expected_hosts(websites: Iterable[str], aliases: Mapping[str, Iterable[str]] | None = None) -> tuple[str, ...]:
    """Hosts of every alternative website, plus the targets of its aliases (``site_aliases`` keys)."""
    hosts: list[str] = []
    for site in websites:
        for host in site_hosts(site):
            hosts.append(host)
            hosts.extend((aliases or {}).get(host, ()))
    return tuple(dict.fromkeys(hosts))
