"""One Chromium per run, one BrowserContext per episode: episodes share the process but never cookies or HARs."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

import structlog
from playwright.async_api import Browser, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

from p2w_runtime.browser._blocking import CONFIRMATION_GUARD_JS
from p2w_runtime.browser._capture import CAPTURE_TIMEOUT_S, CapturedPage, capture_in
from p2w_runtime.browser._chromium import LAUNCH_ARGS, find_chromium
from p2w_runtime.browser._episode import EpisodeBrowser, EpisodeSettings
from p2w_runtime.browser._errors import BrowserUnavailable, first_line
from p2w_runtime.scratch import new_scratch_folder

log = structlog.get_logger()


class BrowserSession:
    """Async context manager around one launched Chromium.

    ``host_resolver_rules`` (e.g. ``"MAP *.p2w.test 127.0.0.1:8123"``) becomes ``--host-resolver-rules``, so the
    demo sites answer under their own host names; ``extra_args`` go to Chromium after the fixed ``LAUNCH_ARGS``.
    """

    def __init__(
        self,
        chromium: str | None = None,
        *,
        extra_args: Sequence[str] = (),
        host_resolver_rules: str | None = None,
        headless: bool = True,
    ) -> None:
        self._explicit = chromium
        self._args = [*LAUNCH_ARGS, *extra_args]
        if host_resolver_rules:
            self._args.append(f"--host-resolver-rules={host_resolver_rules}")
        self._headless = headless
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._relaunching = asyncio.Lock()
        self.executable: str | None = None

    @property
    def version(self) -> str:
        """Chromium's version string, for the run's package list."""
        return self._require().version

    async def __aenter__(self) -> BrowserSession:
        self._playwright = await async_playwright().start()
        try:
            self.executable = find_chromium(self._explicit, bundled=self._playwright.chromium.executable_path)
            self._browser = await self._launch()
        except BaseException:
            await self._playwright.stop()
            self._playwright = None
            raise
        return self

    async def _launch(self) -> Browser:
        assert self._playwright is not None
        try:
            browser = await self._playwright.chromium.launch(
                executable_path=self.executable, headless=self._headless, args=self._args
            )
        except PlaywrightError as exc:
            raise BrowserUnavailable(
                f"Chromium {self.executable} failed to start: {first_line(exc)} "
                "(another with --chromium or P2W_CHROMIUM)"
            ) from exc
        log.info("browser.launched", executable=self.executable, version=browser.version)
        return browser

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            if self._browser is not None:
                await self._browser.close()
        finally:
            self._browser = None
            if self._playwright is not None:
                await self._playwright.stop()
                self._playwright = None

    async def new_context(
        self, *, har_path: str | Path | None = None, settings: EpisodeSettings | None = None
    ) -> EpisodeBrowser:
        """A fresh context with one blank tab, recording a HAR (to ``har_path``, else a scratch file).

        ``EpisodeBrowser.close()`` returns the scrubbed HAR and, when ``har_path`` was given, rewrites it scrubbed.
        """
        settings = settings or EpisodeSettings()
        scratch: Path | None = None
        if har_path:
            path = Path(har_path)
        else:
            scratch = new_scratch_folder("har")
            path = scratch / "episode.har"
        context = await (await self._running()).new_context(
            viewport={"width": settings.viewport_width, "height": settings.viewport_height},
            record_har_path=path,
            record_har_content=settings.har_content,
            service_workers="block",
            locale="en-US",
        )
        context.set_default_timeout(settings.action_timeout_s * 1000)
        context.set_default_navigation_timeout(settings.navigation_timeout_s * 1000)
        await context.add_init_script(CONFIRMATION_GUARD_JS)
        page = await context.new_page()
        return EpisodeBrowser(context, page, settings, path, scratch)

    async def _running(self) -> Browser:
        """The Chromium new episodes open in, launched again if it exited (killed, crashed) since the last one: its
        death ends the episodes it had open, and the run goes on with the next ones instead of failing them all."""
        async with self._relaunching:
            browser = self._require()
            if not browser.is_connected():
                log.warning("browser.relaunching", reason="Chromium exited during the run (killed or crashed)")
                self._browser = browser = await self._launch()
            return browser

    def _require(self) -> Browser:
        if self._browser is None:
            raise RuntimeError("BrowserSession is not started; use `async with BrowserSession(...)`")
        return self._browser


async def capture_pages(
    session: BrowserSession, urls: Sequence[str], *, timeout_s: float = CAPTURE_TIMEOUT_S
) -> list[CapturedPage]:
    """Each URL in its own tab of one fresh context (import time)."""
    browser = await session.new_context()
    try:
        return await capture_in(browser.context, urls, timeout_s=timeout_s)
    finally:
        await browser.close()
