"""The recorded final page, loaded into headless Chromium so WebArena's locators run on a real DOM.

The page is served from the recording at its recorded URL (so ``document.URL`` and relative
links are right) with every other request refused and page scripts disabled: the DOM is
the one the agent left, it cannot re-render or fetch anything. ``page.evaluate`` still runs
the locators, as in WebArena.
"""

from __future__ import annotations

import asyncio
import html
from dataclasses import dataclass
from typing import Any

import structlog

from p2w_runtime.errors import UserError

log = structlog.get_logger(__name__)


class ChromiumNotFound(UserError):
    """No Chromium to render recorded pages with, or it would not start."""


@dataclass(frozen=True, slots=True)
class Locate:
    """One locator to evaluate (``""`` = the whole page, else a ``document.…`` expression) after its prep actions."""

    locator: str
    prep_actions: tuple[str, ...] = ()


class PageRenderer:
    """One headless browser for a batch; each evaluation gets a fresh context. Launched on first use."""

    def __init__(self, executable: str | None = None) -> None:
        self._executable = executable
        self._lock = asyncio.Lock()
        self._playwright: Any = None
        self._browser: Any = None

    async def _ensure(self) -> Any:
        async with self._lock:
            if self._browser is None:
                from playwright.async_api import Error as PlaywrightError
                from playwright.async_api import async_playwright

                from p2w_runtime.browser import LAUNCH_ARGS, BrowserUnavailable, find_chromium

                self._playwright = await async_playwright().start()
                try:
                    executable = find_chromium(self._executable)
                    self._browser = await self._playwright.chromium.launch(
                        executable_path=executable, headless=True, args=list(LAUNCH_ARGS)
                    )
                except (BrowserUnavailable, PlaywrightError) as exc:
                    await self._playwright.stop()
                    self._playwright = None
                    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                    raise ChromiumNotFound(f"program_html checks need Chromium: {message}") from None
                log.debug("webarena.browser_started", executable=executable)
            return self._browser

    async def evaluate(self, url: str, dom_html: str, locates: list[Locate]) -> list[str]:
        """What each locator selects on the recorded page, as WebArena computes it (``str()`` of the JS value,
        HTML entities unescaped; a failing locator selects ``""``)."""
        browser = await self._ensure()
        context = await browser.new_context(java_script_enabled=False)
        try:
            page = await context.new_page()

            async def serve(route: Any) -> None:
                request = route.request
                if request.is_navigation_request() and request.frame == page.main_frame:
                    await route.fulfill(body=dom_html, content_type="text/html; charset=utf-8")
                else:
                    await route.abort()

            await page.route("**/*", serve)
            await page.goto(url, wait_until="domcontentloaded")
            return [html.unescape(await self._select(page, item)) for item in locates]
        finally:
            await context.close()

    @staticmethod
    async def _select(page: Any, item: Locate) -> str:
        if not item.locator.strip():
            return await page.content()
        for action in item.prep_actions:
            try:
                await page.evaluate(f"() => {action}")
            except Exception:  # WebArena ignores failing preparation actions too
                log.debug("webarena.prep_action_failed", action=action[:120])
        try:
            selected = str(await page.evaluate(f"() => {item.locator}"))
        except Exception:  # the page does not have the element: WebArena scores it as empty
            return ""
        return selected or ""

    async def aclose(self) -> None:
        if self._browser is not None:
            await self._browser.close()
            await self._playwright.stop()
            self._browser = self._playwright = None
