"""The demo sites show the same day on every machine: the day they call today is UTC's, not the host's time zone's.

A page the recorder sees is stored in its run; two machines recording (or forking) at the same moment must see the
same dates, whatever their ``TZ``.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager

import aiohttp

from p2w_runtime.demo.sites import start_sites
from p2w_runtime.demo.sites.catalog import SITE_HOSTS

TABLEFOR = SITE_HOSTS[3]
# 26 hours apart: at every moment their local dates differ, and at least one differs from UTC's
ZONES = ("Etc/GMT-14", "Etc/GMT+12")


@contextmanager
def time_zone(name: str) -> Iterator[None]:
    saved = os.environ.get("TZ")
    os.environ["TZ"] = name
    time.tzset()
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = saved
        time.tzset()


async def _shown_day() -> str:
    """The date TableFor's search fills in when the visitor gives none: the sites' today."""
    sites = await start_sites(0)
    try:
        async with aiohttp.ClientSession() as http:
            url = f"http://127.0.0.1:{sites.port}/search?city=Austin"
            async with http.get(url, headers={"Host": TABLEFOR}) as response:
                page = await response.text()
    finally:
        await sites.stop()
    found = re.search(r'name="date" value="(\d{4}-\d{2}-\d{2})"', page)
    assert found, page[:500]
    return found.group(1)


async def test_the_sites_show_the_utc_day_whatever_the_machines_time_zone() -> None:
    before = dt.datetime.now(dt.UTC).date().isoformat()
    shown = []
    for zone in ZONES:
        with time_zone(zone):
            shown.append(await _shown_day())
    after = dt.datetime.now(dt.UTC).date().isoformat()
    assert shown[0] == shown[1] or before != after, shown  # a UTC midnight between the two is the only excuse
    assert set(shown) <= {before, after}, (shown, before, after)
