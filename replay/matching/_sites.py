"""Is a page on the expected website, and is the website named in a text?

The expected site comes from hand-written task text (``kohls.com``, ``coursera.org.com``,
``sports.yahoo.com``, ``Google Flights.com``), so it is first turned into host names:
scheme, path and ``www.`` dropped, spaces removed, and the benchmark's recurring typo of a
``.com`` appended to another TLD (``last.fm.com``, ``recreation.gov.com``) also read without it.
A URL is on the site when its host equals one of them or is a subdomain of it; ``m.kohls.com`` is
on ``kohls.com`` but ``finance.yahoo.com`` is not on ``sports.yahoo.com`` (and no demo site on
``*.p2w.test`` is on another).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

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
    labels = host.split(".")
    if len(labels) >= 3 and labels[-1] == "com" and labels[-2] in _TYPO_TLDS:
        hosts.append(".".join(labels[:-1]))
    return tuple(dict.fromkeys(hosts))


def on_site(url: str, hosts: Iterable[str]) -> str | None:
    """The expected host ``url`` is on, or None."""
    host = host_of(url)
    if not host:
        return None
    for expected in hosts:
        if host == expected or host.endswith("." + expected):
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
    labels = host.split(".")
    name = labels[0] if len(labels) == 2 else ""
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


def expected_hosts(websites: Iterable[str], aliases: Mapping[str, Iterable[str]] | None = None) -> tuple[str, ...]:
    """Hosts of every alternative website, plus configured aliases (a demo site standing for a real one)."""
    hosts: list[str] = []
    for site in websites:
        for host in site_hosts(site):
            hosts.append(host)
            for alias in (aliases or {}).get(host, ()):
                hosts.extend(site_hosts(alias))
    return tuple(dict.fromkeys(hosts))
