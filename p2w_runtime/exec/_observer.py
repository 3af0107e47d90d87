"""The Chromium an outside agent drives, started by p2w-rt and watched over CDP.

p2w-rt starts the browser itself (``--remote-debugging-port``), so the agent needs no code to be observed: it
attaches to ``P2W_CDP_URL`` (Playwright's ``connect_over_cdp`` in any language, or raw CDP) and finds the task's
start page open in the default context. p2w-rt attaches too, with its own Playwright connection, and records:

- the page the agent decides on: before each of its model calls, an ``observation`` (URL, title, tabs, AX tree,
  screenshot), only when the page changed since the last one (another URL or another AX tree);
- its navigations: each main-frame navigation of a page of the browser since the last model call, as a ``goto``
  ``action`` of the step it was made in (what the agent did, seen from outside: a click that loaded a page is
  recorded as the page it opened);
- at the end, the final state (DOM with typed values, AX tree, full-page screenshot, stylesheets) of the page the
  agent was last on.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
from pathlib import Path

from playwright.async_api import Browser, Frame, Page, Playwright

from p2w_runtime.browser import LAUNCH_ARGS
from p2w_runtime.errors import UserError
from p2w_runtime.recording import EpisodeRecorder, PageWatcher
from schemas import ParsedAction

_START_S = 60.0
"""How long Chromium may take to open its debugging port (a loaded 2-core machine takes seconds)."""


class ObservedChromium:
    """One episode's Chromium: ``async with`` starts it at ``start_url``; ``cdp_url`` is what the agent attaches to."""

    def __init__(self, playwright: Playwright, executable: str, extra_args: list[str], start_url: str) -> None:
        self._pw = playwright
        self._executable = executable
        self._args = extra_args
        self._start_url = start_url
        self._profile = ""
        self._process: asyncio.subprocess.Process | None = None
        self._browser: Browser | None = None
        self.cdp_url = ""
        self._page: Page | None = None
        self._navigations: list[str] = []
        self._seen: tuple[str, str] | None = None
        self._watcher = PageWatcher()
        self.navigations_as_actions = True
        """Off once the agent's own spans say what it did (``SpanSink``)."""
        self._lock = asyncio.Lock()

    async def __aenter__(self) -> ObservedChromium:
        self._profile = tempfile.mkdtemp(prefix="p2w-exec-")
        self._process = await asyncio.create_subprocess_exec(
            self._executable,
            "--headless",
            "--remote-debugging-port=0",
            "--remote-debugging-address=127.0.0.1",
            f"--user-data-dir={self._profile}",
            *LAUNCH_ARGS,
            *self._args,
            "about:blank",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            port = await self._debugging_port()
            self.cdp_url = f"http://127.0.0.1:{port}"
            self._browser = await self._pw.chromium.connect_over_cdp(self.cdp_url)
            context = self._browser.contexts[0]
            context.on("page", self._watch)
            page = context.pages[0] if context.pages else await context.new_page()
            self._watch(page)
            await page.goto(self._start_url, wait_until="domcontentloaded")
            self._navigations.clear()  # the start page is the episode's first observation, not an action
        except BaseException:
            await self._stop()
            raise
        return self

    async def __aexit__(self, *_: object) -> None:
        await self._stop()

    async def _debugging_port(self) -> int:
        marker = Path(self._profile) / "DevToolsActivePort"
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _START_S
        while loop.time() < deadline:
            assert self._process is not None
            if self._process.returncode is not None:
                raise UserError(f"Chromium {self._executable} exited at once (status {self._process.returncode})")
            with contextlib.suppress(FileNotFoundError, ValueError, IndexError):
                return int(marker.read_text().splitlines()[0])
            await asyncio.sleep(0.05)
        raise UserError(f"Chromium {self._executable} opened no debugging port in {_START_S:g} s")

    async def _stop(self) -> None:
        if self._browser is not None:
            with contextlib.suppress(Exception):
                await self._browser.close()
            self._browser = None
        if self._process is not None and self._process.returncode is None:
            self._process.terminate()
            try:
                await asyncio.wait_for(self._process.wait(), 10)
            except TimeoutError:
                self._process.kill()
                await self._process.wait()
        shutil.rmtree(self._profile, ignore_errors=True)

    def _watch(self, page: Page) -> None:
        """Follow ``page``: it becomes the agent's page when it opens or navigates."""
        self._page = page

        def navigated(frame: Frame) -> None:
            if frame == page.main_frame and frame.url != "about:blank":
                self._page = page
                self._navigations.append(frame.url)

        page.on("framenavigated", navigated)

    def _current(self) -> Page | None:
        if self._page is not None and not self._page.is_closed():
            return self._page
        if self._browser is None:
            return None
        pages = [p for context in self._browser.contexts for p in context.pages if not p.is_closed()]
        return pages[-1] if pages else None

    async def observe(self, episode: EpisodeRecorder) -> None:
        """Record the navigations since the last call as actions, then the page when it changed."""
        async with self._lock:
            await self._navigated(episode)
            page = self._current()
            if page is None:
                return
            view = await self._watcher.view(page)
            if self._seen == (view.url, view.ax_text):
                return
            self._seen = (view.url, view.ax_text)
            await episode.observe(
                url=view.url, title=view.title, tabs=view.tabs, ax_tree=view.ax_text, screenshot=view.screenshot
            )

    async def final_state(self, episode: EpisodeRecorder) -> None:
        """The navigations still unrecorded, then the final state of the agent's last page (when it has one)."""
        async with self._lock:
            await self._navigated(episode)
            page = self._current()
            if page is not None:
                await episode.final_state(page)

    async def _navigated(self, episode: EpisodeRecorder) -> None:
        """Each navigation since the last look as a ``goto`` of the current step (none before the first one)."""
        urls, self._navigations = self._navigations, []
        for url in urls if episode.step and self.navigations_as_actions else []:
            await episode.action(f"goto [{url}]", ParsedAction(name="goto", args=[url]))
