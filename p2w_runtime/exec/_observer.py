"""The outside agent's Chromium, watched: what p2w-rt records of an agent that records nothing itself.

Through its own connection to the agent's browser (``AgentChromium``) p2w-rt records:

- the page the agent decides on: before each of its model calls, an ``observation`` (URL, title, tabs, AX tree,
  screenshot), only when the page changed since the last one (another URL or another AX tree);
- its navigations: each main-frame navigation of a page of the browser since the last model call, as a ``goto``
  ``action`` of the step it was made in (what the agent did, seen from outside: a click that loaded a page is
  recorded as the page it opened);
- at the end, the final state (DOM with typed values, AX tree, full-page screenshot, stylesheets) of the page the
  agent was last on, and with ``keep_har`` the HAR of every page it loaded, bodies embedded.
"""

from __future__ import annotations

import asyncio

from playwright.async_api import Frame, Page, Playwright

from p2w_rt.schemas import ParsedAction
from p2w_runtime.exec._agent_chromium import AgentChromium
from p2w_runtime.recording import EpisodeRecorder, PageWatcher


class ObservedChromium(AgentChromium):
    """One episode's Chromium, watched: ``observe`` before each model call, ``final_state`` at the end."""

    def __init__(
        self, playwright: Playwright, executable: str, extra_args: list[str], start_url: str, *, keep_har: bool = False
    ) -> None:
        super().__init__(playwright, executable, extra_args, start_url, keep_har=keep_har)
        self._page: Page | None = None
        self._navigations: list[str] = []
        self._seen: tuple[str, str] | None = None
        self._watcher = PageWatcher()
        self.navigations_as_actions = True
        """Off once the agent's own spans say what it did (``SpanSink``)."""
        self._lock = asyncio.Lock()

    def opened(self, page: Page) -> None:
        page.context.on("page", self._watch)
        self._watch(page)

    def started(self) -> None:
        self._navigations.clear()  # the start page is the episode's first observation, not an action

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
        if self.browser is None:
            return None
        pages = [p for context in self.browser.contexts for p in context.pages if not p.is_closed()]
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

    async def stored(self, episode: EpisodeRecorder) -> None:
        """Store what is staged (the call that just ended, the page it was asked on), the write running behind the
        agent. An outside agent's step ends at no action of its own, only at its next navigation: until then its
        calls were held, and a recorder killed -9 lost every call the agent made on one page. Not once the final
        state is staged: the end stores the rest."""
        async with self._lock:
            if episode.writer.grammar.phase == "open":
                await episode.writer.flush()

    async def final_state(self, episode: EpisodeRecorder) -> None:
        """The navigations still unrecorded, then the final state of the agent's last page (when it has one)."""
        async with self._lock:
            await self._navigated(episode)
            page = self._current()
            if page is not None:
                await episode.final_state(page, har=self.har)

    async def _navigated(self, episode: EpisodeRecorder) -> None:
        """Each navigation since the last look as a ``goto`` of the current step (none before the first one)."""
        urls, self._navigations = self._navigations, []
        for url in urls if episode.step and self.navigations_as_actions else []:
            await episode.action(f"goto [{url}]", ParsedAction(name="goto", args=[url]))
