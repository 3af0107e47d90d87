"""What executing an action needs of the episode's browser: a narrow protocol, so ``_execute`` never imports
``_episode`` (which imports ``_execute``) and the action handlers can be read without the whole episode class."""

from __future__ import annotations

from typing import Protocol

from playwright.async_api import BrowserContext, Page

from p2w_runtime.browser._refs import ElementIds


class Timeouts(Protocol):
    """The bounds every wait of an action keeps to (``EpisodeSettings`` has them)."""

    @property
    def navigation_timeout_s(self) -> float: ...

    @property
    def action_timeout_s(self) -> float: ...


class EpisodeHandle(Protocol):
    """The episode's tabs and waits as the action handlers use them (``EpisodeBrowser`` is the one implementation)."""

    @property
    def settings(self) -> Timeouts: ...

    @property
    def context(self) -> BrowserContext:
        """Where new tabs open (``new_tab``, links with a target)."""

    @property
    def ids(self) -> ElementIds:
        """The element ids of the observations the agent read."""

    @property
    def pages(self) -> list[Page]:
        """The open tabs, in order."""

    async def current_page(self) -> Page:
        """The active tab, after any tab the last action opened."""

    def activate(self, page: Page) -> None:
        """Make ``page`` the tab the next action acts on."""

    async def settle(self, page: Page) -> str | None:
        """Wait (bounded) for the page to load; the error to report if it did not."""

    async def stop_loading(self, page: Page) -> None:
        """Abort a pending navigation."""

    async def navigation_history(self, page: Page) -> tuple[int, int]:
        """(current index, number of entries) of the tab's history."""
