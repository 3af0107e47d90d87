"""The browser layer in real headless Chromium against a small aiohttp site on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from aiohttp import web

from p2w_runtime.actions import parse_action
from p2w_runtime.browser import (
    BrowserSession,
    BrowserUnavailable,
    EpisodeBrowser,
    EpisodeSettings,
    ExecResult,
    ObservationData,
)
from p2w_runtime.browser._blocking import FINAL_CONFIRMATION_ERROR, detect_block
from tests.helpers.browser_site import PNG_MAGIC, SECRET_COOKIE, SECRET_TOKEN, Site

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def site() -> AsyncIterator[Site]:
    site = Site()
    runner = web.AppRunner(site.app(), shutdown_timeout=0.5)
    await runner.setup()
    tcp = web.TCPSite(runner, "127.0.0.1", 0)
    await tcp.start()
    port = runner.addresses[0][1]
    site.base = f"http://127.0.0.1:{port}"
    yield site
    site.release.set()
    await runner.cleanup()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def session(site: Site) -> AsyncIterator[BrowserSession]:
    port = site.base.rsplit(":", 1)[1]
    async with BrowserSession("/usr/bin/chromium", host_resolver_rules=f"MAP *.p2w.test 127.0.0.1:{port}") as session:
        yield session


@pytest_asyncio.fixture(loop_scope="module")
async def episode(session: BrowserSession) -> AsyncIterator[EpisodeBrowser]:
    episode = await session.new_context(settings=EpisodeSettings(navigation_timeout_s=3.0, action_timeout_s=2.0))
    yield episode
    await episode.close()


async def run(episode: EpisodeBrowser, action: str) -> ExecResult:
    return await episode.execute(parse_action(action))


def element_id(observation: ObservationData, pattern: str) -> str:
    """The number the agent would read for the first line matching ``pattern``."""
    match = re.search(r"\[(\d+)\] " + pattern, observation.ax_text)
    assert match, f"{pattern!r} not in:\n{observation.ax_text}"
    return match.group(1)


def click(observation: ObservationData, pattern: str) -> str:
    return f"click [{element_id(observation, pattern)}]"


async def open_page(episode: EpisodeBrowser, site: Site, path: str) -> ObservationData:
    assert await run(episode, f"goto [{site.base}{path}]") == ExecResult("executed")
    return await episode.observe()


async def test_observation_numbers_the_elements(episode: EpisodeBrowser, site: Site) -> None:
    obs = await open_page(episode, site, "/form")
    assert obs.url == f"{site.base}/form" and obs.title == "Search form"
    assert obs.tabs == [f"Search form ({site.base}/form)"] and obs.active_tab == 0
    assert re.search(r'\[\d+\] textbox "Query"', obs.ax_text) and re.search(r'\[\d+\] button "Search"', obs.ax_text)
    assert obs.screenshot_png and obs.screenshot_png.startswith(PNG_MAGIC)
    assert obs.blocked is None
    again = await episode.observe()
    assert element_id(again, 'button "Search"') == element_id(obs, 'button "Search"')


async def test_type_and_click_submit_a_form(episode: EpisodeBrowser, site: Site) -> None:
    obs = await open_page(episode, site, "/form")
    assert await run(episode, f"type [{element_id(obs, 'textbox')}] [blue [XL] shoes] [0]") == ExecResult("executed")
    assert await run(episode, f"click [{element_id(obs, 'button')}]") == ExecResult("executed")
    after = await episode.observe()
    assert after.url == f"{site.base}/search" and "Results for blue [XL] shoes" in after.ax_text
    assert site.searches[-1] == "blue [XL] shoes"


async def test_type_with_enter_and_press_submit(episode: EpisodeBrowser, site: Site) -> None:
    obs = await open_page(episode, site, "/form")
    assert await run(episode, f"type [{element_id(obs, 'textbox')}] [red dress]") == ExecResult("executed")
    assert site.searches[-1] == "red dress" and episode.context.pages[0].url.endswith("/search")
    obs = await open_page(episode, site, "/form")
    await run(episode, f"type [{element_id(obs, 'textbox')}] [green hat] [0]")
    assert await run(episode, "press [enter]") == ExecResult("executed")
    assert site.searches[-1] == "green hat" and (await episode.observe()).url.endswith("/search")


async def test_type_selects_an_option(episode: EpisodeBrowser, site: Site) -> None:
    obs = await open_page(episode, site, "/form")
    size = element_id(obs, "combobox")
    assert await run(episode, f"type [{size}] [medium] [0]") == ExecResult("executed")
    assert 'option "Medium" [selected]' in (await episode.observe()).ax_text
    result = await run(episode, f"type [{size}] [XXL] [0]")
    assert result.status == "invalid" and "options: Small, Medium" in (result.error or "")


async def test_navigation_back_and_forward(episode: EpisodeBrowser, site: Site) -> None:
    obs = await open_page(episode, site, "/")
    assert (await run(episode, "go_back")).status == "executed"  # back to about:blank
    assert (await run(episode, "go_back")) == ExecResult("invalid", "there is no previous page in this tab")
    await run(episode, "go_forward")
    obs = await episode.observe()
    assert await run(episode, click(obs, 'link "Second page"')) == ExecResult("executed")
    assert (await episode.observe()).url == f"{site.base}/page2"
    assert await run(episode, "go_back") == ExecResult("executed")
    assert (await episode.observe()).url == f"{site.base}/"
    assert await run(episode, "go_forward") == ExecResult("executed")
    assert (await episode.observe()).title == "Page two"
    assert (await run(episode, "go_forward")).status == "invalid"


async def test_ids_are_invalid_when_unknown_stale_or_wrong_kind(episode: EpisodeBrowser, site: Site) -> None:
    obs = await open_page(episode, site, "/form")
    button = element_id(obs, 'button "Search"')
    result = await run(episode, "click [99999]")
    assert result.status == "invalid" and "element [99999] does not exist" in (result.error or "")
    typed = await run(episode, f"type [{button}] [text] [0]")
    assert typed.status == "invalid" and typed.error
    await open_page(episode, site, "/page2")
    stale = await run(episode, f"click [{button}]")
    assert stale.status == "invalid" and "no longer on the page" in (stale.error or "")
    assert (await run(episode, "press [NoSuchKey]")).status == "invalid"


async def test_hover(episode: EpisodeBrowser, site: Site) -> None:
    obs = await open_page(episode, site, "/hover")
    assert await run(episode, f"hover [{element_id(obs, 'button')}]") == ExecResult("executed")
    assert 'button "Hovered now"' in (await episode.observe()).ax_text


async def test_scroll_moves_the_window_the_agent_reads(session: BrowserSession, site: Site) -> None:
    episode = await session.new_context(settings=EpisodeSettings(max_chars=1000, screenshots=False))
    try:
        first = await open_page(episode, site, "/long")
        assert "Top button" in first.ax_text and "Bottom button" not in first.ax_text
        assert "more characters truncated; scroll [down]" in first.ax_text and first.screenshot_png is None
        assert len(first.ax_text) < 1100
        assert (await run(episode, "scroll [up]")) == ExecResult(
            "executed", "the page did not move: already at the top"
        )
        for _ in range(6):
            assert (await run(episode, "scroll [down]")).status == "executed"
        later = await episode.observe()
        assert "Bottom button" in later.ax_text and "Top button" not in later.ax_text
        assert later.ax_text.startswith("[... ") and "above the viewport omitted" in later.ax_text
        await run(episode, click(later, 'button "Bottom button"'))
    finally:
        await episode.close()


async def test_tabs(episode: EpisodeBrowser, site: Site) -> None:
    obs = await open_page(episode, site, "/")
    assert await run(episode, click(obs, 'link "Form in new tab"')) == ExecResult("executed")
    popup = await episode.observe()
    assert popup.url == f"{site.base}/form" and popup.active_tab == 1 and len(popup.tabs) == 2
    assert await run(episode, "new_tab") == ExecResult("executed")
    blank = await episode.observe()
    assert blank.url == "about:blank" and blank.active_tab == 2 and blank.ax_text == "(empty page)"
    assert await run(episode, "tab_focus [0]") == ExecResult("executed")
    assert (await episode.observe()).title == "Index"
    assert await run(episode, "tab_focus [7]") == ExecResult("invalid", "there is no tab 7; open tabs are 0..2")
    assert (await run(episode, f"click [{element_id(popup, 'button')}]")).error == (
        f"element [{element_id(popup, 'button')}] is not in the current tab"
    )
    assert await run(episode, "close_tab") == ExecResult("executed")
    left = await episode.observe()
    assert len(left.tabs) == 2 and left.url == "about:blank"
    await run(episode, "close_tab")
    await run(episode, "close_tab")
    assert len((await episode.observe()).tabs) == 1


async def test_agent_actions_are_not_browser_actions(episode: EpisodeBrowser) -> None:
    for action in ("stop [x]", "note [x]", "memory_access [x]"):
        with pytest.raises(ValueError, match="not a browser action"):
            await run(episode, action)


async def test_a_hanging_page_yields_an_error_within_the_timeout(session: BrowserSession, site: Site) -> None:
    episode = await session.new_context(settings=EpisodeSettings(navigation_timeout_s=1.0, action_timeout_s=1.0))
    try:
        obs = await open_page(episode, site, "/")
        started = time.monotonic()
        result = await run(episode, f"goto [{site.base}/hang]")
        assert result.status == "executed" and result.timed_out and "timed out" in (result.error or "")
        clicked = await run(episode, click(obs, 'link "Slow page"'))
        assert clicked.timed_out
        after = await episode.observe()
        assert after.url == f"{site.base}/" and "Second page" in after.ax_text
        assert time.monotonic() - started < 8
    finally:
        await episode.close()


async def test_blocked_pages_are_detected(episode: EpisodeBrowser, site: Site) -> None:
    assert (
        await open_page(episode, site, "/captcha")
    ).blocked == f"HTTP 403 on the main document ({site.base}/captcha)"
    assert (await open_page(episode, site, "/nope")).blocked == f"HTTP 404 on the main document ({site.base}/nope)"
    assert (await open_page(episode, site, "/robot")).blocked == "CAPTCHA marker 'are you a robot' in the page text"
    assert (await open_page(episode, site, "/page2")).blocked is None
    assert await detect_block(await episode.current_page()) is None


async def test_final_confirmations_are_never_pressed(episode: EpisodeBrowser, site: Site) -> None:
    obs = await open_page(episode, site, "/checkout")
    note, email = element_id(obs, 'textbox "Note"'), element_id(obs, 'textbox "Email"')
    refused = ExecResult("blocked", FINAL_CONFIRMATION_ERROR)
    assert await run(episode, click(obs, 'button "Place order"')) == refused
    assert await run(episode, click(obs, 'button "Quick buy"')) == refused
    assert await run(episode, f"type [{note}] [leave at door] [1]") == refused
    await run(episode, f"type [{note}] [again] [0]")
    assert await run(episode, "press [Enter]") == refused
    assert "never submits payments or final confirmations" in FINAL_CONFIRMATION_ERROR
    assert await run(episode, f"type [{email}] [a@b.test] [1]") == ExecResult("executed")
    assert site.unmarked_submissions == ["a@b.test"]  # the same Enter path does submit an unmarked form
    assert site.confirmations == []


async def test_har_is_recorded_without_cookies_or_auth(session: BrowserSession, site: Site, tmp_path: Path) -> None:
    har_path = tmp_path / "episode.har"
    episode = await session.new_context(har_path=har_path)
    await open_page(episode, site, "/login")
    obs = await open_page(episode, site, "/account")
    for _ in range(20):
        if "api ok" in obs.ax_text:
            break
        await asyncio.sleep(0.1)
        obs = await episode.observe()
    assert "api ok" in obs.ax_text and site.cookies_seen[-1] == SECRET_COOKIE
    har = await episode.close()
    assert await episode.close() == har
    urls = [entry["request"]["url"] for entry in json.loads(har)["log"]["entries"]]
    assert {f"{site.base}/login", f"{site.base}/account", f"{site.base}/api"} <= set(urls)
    for blob in (har, har_path.read_bytes()):
        assert SECRET_COOKIE.encode() not in blob and SECRET_TOKEN.encode() not in blob
        assert b'"Set-Cookie"' not in blob and b'"Authorization"' not in blob


async def test_episodes_do_not_share_cookies(session: BrowserSession, site: Site) -> None:
    first, second = await session.new_context(), await session.new_context()
    try:
        await open_page(first, site, "/login")
        await open_page(second, site, "/account")
        assert site.cookies_seen[-1] == ""
        await open_page(first, site, "/account")
        assert site.cookies_seen[-1] == SECRET_COOKIE
    finally:
        await first.close()
        await second.close()


async def test_final_state(episode: EpisodeBrowser, site: Site) -> None:
    await open_page(episode, site, "/long")
    state = await episode.final_state()
    assert state.url == f"{site.base}/long" and state.title == "Long" and state.errors == []
    assert b"<p>Row number 79</p>" in state.dom_html
    assert b'button "Top button"' in state.ax_tree and b'button "Bottom button"' in state.ax_tree
    assert b"truncated" not in state.ax_tree
    assert state.screenshot.startswith(PNG_MAGIC)


async def test_final_state_html_carries_typed_form_values(episode: EpisodeBrowser, site: Site) -> None:
    obs = await open_page(episode, site, "/form")
    await run(episode, f"type [{element_id(obs, 'textbox')}] [wool socks] [0]")
    await run(episode, f"type [{element_id(obs, 'combobox')}] [Medium] [0]")
    state = await episode.final_state()
    assert b'value="wool socks"' in state.dom_html
    assert re.search(rb'<option value="m" selected(="")?>Medium', state.dom_html)


async def test_host_resolver_rules_reach_the_local_site(episode: EpisodeBrowser, site: Site) -> None:
    assert await run(episode, "goto [shop.p2w.test/host]") == ExecResult("executed")
    obs = await episode.observe()
    assert obs.url == "http://shop.p2w.test/host" and obs.title.startswith("Host shop.p2w.test")


async def test_a_browser_that_does_not_start_is_reported() -> None:
    with pytest.raises(BrowserUnavailable, match="failed to start"):
        async with BrowserSession("/bin/false"):
            pass
