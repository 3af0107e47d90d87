"""The demo websites, served for real on 127.0.0.1 and driven with HTTP requests carrying their Host headers."""

from __future__ import annotations

import asyncio
import re
import signal
import sys
import time
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

import aiohttp
import pytest
from playwright.async_api import async_playwright

from p2w_runtime.demo.sites import RunningSites, SitesError, start_sites
from p2w_runtime.demo.sites._products import product
from p2w_runtime.demo.sites.catalog import SITE_HOSTS, SITES, host_resolver_rules, start_url

SEARCH, THREADS, BASKET, TABLEFOR, STAGEPASS = SITE_HOSTS
FINAL = 'data-final-confirmation="true"'


@pytest.fixture
async def sites() -> AsyncIterator[RunningSites]:
    running = await start_sites(0)
    yield running
    await running.stop()


class Browser:
    """One cookie jar = one browser context; requests go to 127.0.0.1 with the demo host in ``Host``."""

    def __init__(self, sites: RunningSites, http: aiohttp.ClientSession) -> None:
        self.sites, self.http = sites, http

    async def request(self, method: str, host: str, path: str, referer: str = "", **kwargs) -> tuple[int, str]:
        url = f"http://127.0.0.1:{self.sites.port}{path}"
        headers = {"Host": host} | ({"Referer": referer} if referer else {})
        async with self.http.request(method, url, headers=headers, **kwargs) as response:
            return response.status, await response.text()

    async def get(self, host: str, path: str) -> tuple[int, str]:
        """A URL typed into the address bar: no Referer."""
        return await self.request("GET", host, path)

    async def follow(self, host: str, path: str, on: str = "/") -> tuple[int, str]:
        """A link or GET form on page ``on`` of the same site: the browser sends that page as Referer."""
        return await self.request("GET", host, path, referer=f"http://{host}{on}")

    async def post(self, host: str, path: str, data: dict[str, str]) -> tuple[int, str]:
        """POST then follow the 303 by hand (aiohttp would follow it to 127.0.0.1 without our Host header)."""
        url = f"http://127.0.0.1:{self.sites.port}{path}"
        async with self.http.post(url, data=data, headers={"Host": host}, allow_redirects=False) as response:
            if response.status == 303:
                return await self.get(host, response.headers["Location"])
            return response.status, await response.text()


@pytest.fixture
async def browser(sites: RunningSites) -> AsyncIterator[Browser]:
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        yield Browser(sites, http)


def product_ids(html: str) -> list[str]:
    return re.findall(r'data-product-id="([^"]+)"', html)


def test_catalog_names_hosts_under_the_test_domain_and_maps_only_them() -> None:
    assert len(set(SITE_HOSTS)) == len(SITE_HOSTS) >= 4
    assert all(host.endswith(".p2w.test") for host in SITE_HOSTS)
    assert {s.kind for s in SITES} >= {"search", "shop", "restaurants"}
    assert sum(s.kind == "shop" for s in SITES) >= 2
    assert start_url() == "http://search.p2w.test/"
    assert host_resolver_rules(8123) == "--host-resolver-rules=MAP *.p2w.test 127.0.0.1:8123"


async def test_search_start_page_lists_every_site_and_ranks_by_the_query(browser: Browser) -> None:
    status, home = await browser.get(SEARCH, "/")
    assert status == 200 and 'role="search"' in home
    for site in SITES[1:]:
        assert f"http://{site.host}/" in home
    _, leggings = await browser.get(SEARCH, "/search?q=women's+running+leggings")
    ranked = re.findall(r'data-site="([^"]+)"', leggings)
    assert ranked[0] == THREADS and BASKET in ranked and TABLEFOR not in ranked
    assert "http://threads.p2w.test/product/thr-a01" in leggings
    _, thai = await browser.get(SEARCH, "/search?q=thai+restaurant+austin")
    assert re.findall(r'data-site="([^"]+)"', thai)[0] == TABLEFOR
    assert "http://tablefor.p2w.test/search?city=Austin&amp;cuisine=Thai" in thai


async def test_shop_filters_narrow_results_and_every_result_satisfies_them(browser: Browser) -> None:
    _, unfiltered = await browser.get(THREADS, "/search?q=running+leggings")
    _, filtered = await browser.get(THREADS, "/search?q=running+leggings&size=M&min_rating=4.5&max_price=60")
    everything, matching = product_ids(unfiltered), product_ids(filtered)
    assert 0 < len(matching) < len(everything)
    for pid in matching:
        p = product(THREADS, pid)
        assert "M" in p.sizes and p.rating >= 4.5 and p.price <= 60
    assert set(everything) - set(matching), "some leggings must fail the filters"
    _, cheap_first = await browser.get(THREADS, "/search?q=running+leggings&sort=price_asc")
    prices = [product(THREADS, pid).price for pid in product_ids(cheap_first)]
    assert prices == sorted(prices)


async def test_product_page_shows_rating_reviews_sizes_and_delivery_for_the_zip(browser: Browser) -> None:
    status, page = await browser.get(BASKET, "/product/bsk-a01")
    assert status == 200
    assert "4.6 out of 5 stars" in page and "1,530 reviews" in page and "Customer reviews" in page
    assert "Enter your ZIP code" in page
    await browser.post(BASKET, "/location", {"zip": "78701"})
    _, page = await browser.get(BASKET, "/product/bsk-a01")
    assert "Delivering to 78701: Same-day delivery" in page
    await browser.post(BASKET, "/location", {"zip": "10001"})
    _, page = await browser.get(BASKET, "/product/bsk-a01")
    assert "Delivering to 10001" in page and "Same-day" not in page
    status, _ = await browser.get(THREADS, "/product/nope")
    assert status == 404


async def test_cart_belongs_to_one_browser_context(sites: RunningSites, browser: Browser) -> None:
    status, page = await browser.post(THREADS, "/cart/add", {"product_id": "thr-a01", "size": "M", "qty": "2"})
    assert status == 200 and "Stride Women&#x27;s High-Rise Running Leggings" in page and "Qty 2" in page
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as other_http:
        _, other_cart = await Browser(sites, other_http).get(THREADS, "/cart")
    assert "Your cart is empty" in other_cart
    _, own_cart = await browser.get(THREADS, "/cart")
    assert "thr-a01" in own_cart


async def test_add_to_cart_without_a_size_is_refused(browser: Browser) -> None:
    status, page = await browser.post(THREADS, "/cart/add", {"product_id": "thr-a01"})
    assert status == 400 and "Please choose a size" in page
    _, cart = await browser.get(THREADS, "/cart")
    assert "Your cart is empty" in cart


async def test_checkout_marks_the_final_button_and_records_only_a_press(sites: RunningSites, browser: Browser) -> None:
    await browser.post(BASKET, "/location", {"zip": "78701"})
    await browser.post(BASKET, "/cart/add", {"product_id": "bsk-a01", "qty": "2"})
    _, cart = await browser.post(BASKET, "/cart/delivery", {"delivery": "same-day"})
    assert 'value="same-day" checked' in cart
    status, checkout = await browser.get(BASKET, "/checkout")
    assert status == 200 and checkout.count(FINAL) == 1
    assert re.search(r"<button[^>]*" + re.escape(FINAL) + r"[^>]*>Place order</button>", checkout)
    assert "Delivery: Same-day delivery" in checkout
    assert sites.confirmations == []
    await browser.post(BASKET, "/checkout/place", {"total": "9.58"})
    [pressed] = sites.confirmations
    assert pressed.host == BASKET and pressed.action == "place_order" and "bsk-a01:64 oz:2" in pressed.form["lines"]
    _, control = await browser.get(f"127.0.0.1:{sites.port}", "/_p2w/confirmations")
    assert '"action": "place_order"' in control


async def test_restaurant_booking_stops_at_a_marked_confirmation(sites: RunningSites, browser: Browser) -> None:
    _, no_city = await browser.get(TABLEFOR, "/search?cuisine=Thai")
    assert "Choose a city" in no_city
    _, results = await browser.get(TABLEFOR, "/search?city=Austin&cuisine=Thai&party=4&time=19:00&date=2030-06-01")
    found = re.findall(r'data-restaurant-id="([^"]+)"', results)
    assert "tf-a01" in found and all(r.startswith("tf-") for r in found)
    assert "Vegetarian" not in results.split('role="status"')[1]
    slot = re.search(r'href="(/reserve\?[^"]+)"', results).group(1).replace("&amp;", "&")
    status, details = await browser.follow(TABLEFOR, slot, on="/search")
    assert status == 200 and "Reservation details" in details and details.count(FINAL) == 1
    assert "Confirm reservation" in details and sites.confirmations == []
    assert any(draft.get("party") == "4" for s in sites.state.sessions.values() for draft in s.drafts.values())
    _, too_big = await browser.follow(TABLEFOR, "/reserve?restaurant=tf-a03&date=2030-06-01&time=19:00&party=9")
    assert "not available" in too_big


async def test_event_tickets_filter_by_city_genre_price_and_stop_before_buying(browser: Browser) -> None:
    _, page = await browser.get(STAGEPASS, "/search?city=Chicago&genre=jazz&max_price=80")
    found = re.findall(r'data-event-id="([^"]+)"', page)
    assert {"sp-a01", "sp-a02"} <= set(found) and "sp-a03" not in found  # the $110 big band is over budget
    status, checkout = await browser.follow(
        STAGEPASS, "/checkout?event=sp-a01&tier=General+Admission&qty=2", "/event/sp-a01"
    )
    assert status == 200 and "$90.00" in checkout and checkout.count(FINAL) == 1 and "Buy tickets" in checkout


async def test_final_pages_opened_by_a_typed_url_meet_the_bot_wall(browser: Browser) -> None:
    """The sample agent's ``blocked`` slip relies on it: the reservation details, the ticket checkout and the
    cart's add endpoint answer a request that did not come from the site's own link or form with the CAPTCHA."""
    typed = [
        (TABLEFOR, "/reserve?restaurant=tf-a01&date=2030-06-01&time=19:00&party=4"),
        (STAGEPASS, "/checkout?event=sp-a01&tier=General+Admission&qty=2"),
        (THREADS, "/cart/add?product_id=thr-a01&size=M&qty=1"),
    ]
    for host, path in typed:
        status, page = await browser.get(host, path)
        assert status == 403 and "Verify you are human" in page, (host, path)
    status, page = await browser.request("GET", TABLEFOR, typed[0][1], referer=f"http://{STAGEPASS}/")
    assert status == 403, "a link from another site is no link of this one"
    status, page = await browser.follow(TABLEFOR, typed[0][1], on="/restaurant/tf-a01")
    assert status in (200, 409) and "Verify you are human" not in page
    _, cart = await browser.get(THREADS, "/cart")
    assert "Your cart is empty" in cart, "the typed add-to-cart URL changed nothing"


async def test_trouble_pages_for_blocked_detection_and_timeouts(browser: Browser) -> None:
    status, blocked = await browser.get(THREADS, "/blocked")
    assert status == 403 and "Verify you are human" in blocked and "not a robot" in blocked
    status, _ = await browser.get(TABLEFOR, "/error/503")
    assert status == 503
    started = time.monotonic()
    status, _ = await browser.get(SEARCH, "/slow?seconds=0.3")
    assert status == 200 and time.monotonic() - started >= 0.3
    status, unknown = await browser.get("nowhere.p2w.test", "/")
    assert status == 404 and "No demo site" in unknown
    status, _ = await browser.request("DELETE", THREADS, "/cart")
    assert status == 405


async def test_a_taken_port_is_a_clear_error(sites: RunningSites) -> None:
    with pytest.raises(SitesError, match=f"127.0.0.1:{sites.port}"):
        await start_sites(sites.port)


async def test_sites_serve_command_serves_until_interrupted() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "from p2w_rt import cli; cli.main()",
        "sites",
        "serve",
        "--port",
        "0",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        first = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
        port = int(re.search(r"127\.0\.0\.1:(\d+)", first).group(1))
        assert "http://threads.p2w.test/" in first
        assert f"MAP *.p2w.test 127.0.0.1:{port}" in (await proc.stdout.readline()).decode()
        url = f"http://127.0.0.1:{port}/"
        async with aiohttp.ClientSession() as http, http.get(url, headers={"Host": SEARCH}) as r:
            assert r.status == 200 and "Directory of sites" in await r.text()
    finally:
        proc.send_signal(signal.SIGINT)
        await asyncio.wait_for(proc.wait(), 30)
    assert proc.returncode == 130


@pytest.mark.slow
async def test_chromium_reaches_the_sites_by_hostname(sites: RunningSites) -> None:
    """The resolver rule sends *.p2w.test to our port while the URL keeps the bare hostname."""
    args = [
        sites.host_resolver_rules,
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
    ]
    async with async_playwright() as pw:
        chromium = await pw.chromium.launch(executable_path="/usr/bin/chromium", args=args)
        try:
            page = await chromium.new_page()
            response = await page.goto(sites.start_url)
            assert response.status == 200 and await page.title() == "Lookup"
            await page.get_by_label("Search the web").fill("trail running shoes")
            await page.get_by_role("button", name="Search").click()
            await page.get_by_role("link", name="See results on Threads").click()
            await page.wait_for_load_state()
            assert urlsplit(page.url).hostname == THREADS and urlsplit(page.url).port is None
            assert await page.locator("[data-product-id]").count() > 0
        finally:
            await chromium.close()
