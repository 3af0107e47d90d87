"""The recorded final page, loaded into headless Chromium so WebArena's locators run on a real DOM.

The page is served from the recording at its recorded URL (so ``document.URL`` and relative
links are right), its stylesheets from the recorded CSS (so ``outerText`` leaves out what CSS
hides, as on the live page), every other request refused and page scripts disabled: the DOM
is the one the agent left, it cannot re-render or fetch anything. ``page.evaluate`` still runs
the locators, as in WebArena.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from p2w_runtime.errors import UserError
from p2w_runtime.logs import get_logger

log = get_logger(__name__)


class ChromiumNotFound(UserError):
    """No Chromium to render recorded pages with, or it would not start."""


class RecordedPage:
    """One recorded page in a fresh browser context; what WebArena's ``HTMLContentEvaluator`` does to ``page``."""

    def __init__(self, page: Any, url: str) -> None:
        self._page = page
        self.url = url

    async def reload(self) -> None:
        """WebArena's ``page.goto(target)`` to the page it already shows: the DOM as recorded, prep actions undone."""
        await self._page.goto(self.url, wait_until="load")

    async def content(self) -> str:
        return await self._page.content()

    async def locate(self, locator: str, prep_actions: list[str]) -> str:
        """``str()`` of the locator's JS value after the prep actions; WebArena stops preparing at the first
        failing action, and a failing locator selects ``""``."""
        try:
            for action in prep_actions:
                await self._page.evaluate(f"() => {action}")
        except Exception:
            log.debug("webarena.prep_action_failed", locator=locator[:120])
        try:
            return str(await self._page.evaluate(f"() => {locator}")) or ""
        except Exception:
            return ""

    async def evaluate(self, expression: str) -> Any:
        """A helper's own script (errors propagate, as in the helper)."""
        return await self._page.evaluate(expression)


class PageRenderer:
    """One headless browser for a batch; each recorded page gets a fresh context. Launched on first use."""

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

    @asynccontextmanager
    async def open(
        self, url: str, dom_html: str, stylesheets: Mapping[str, str] | None = None
    ) -> AsyncIterator[RecordedPage]:
        """The recorded page at ``url``; ``stylesheets`` maps each recorded stylesheet URL to its CSS text."""
        browser = await self._ensure()
        context = await browser.new_context(java_script_enabled=False)
        css = dict(stylesheets or {})
        try:
            page = await context.new_page()

            async def serve(route: Any) -> None:
                request = route.request
                if request.is_navigation_request() and request.frame == page.main_frame:
                    await route.fulfill(body=dom_html, content_type="text/html; charset=utf-8")
                elif request.url in css:
                    await route.fulfill(body=css[request.url], content_type="text/css; charset=utf-8")
                else:
                    await route.abort()

            await page.route("**/*", serve)
            await page.goto(url, wait_until="load")
            yield RecordedPage(page, url)
        finally:
            await context.close()

    async def aclose(self) -> None:
        if self._browser is not None:
            await self._browser.close()
            await self._playwright.stop()
            self._browser = self._playwright = None
