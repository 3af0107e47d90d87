"""What the recorder reads off a Playwright ``Page`` the agent drives: a step's view, and the final state.

The final state is the browser package's own (``EpisodeBrowser.final_state``: typed form values reflected into the
DOM, stylesheets, full-page screenshot), so offline WebArena checks read an API recording as they read the own
agent's. A step's view is read directly (URL, title, tabs, the page's AI-mode ARIA snapshot, a viewport
screenshot): the own agent's numbered element ids belong to its action grammar, not to another agent's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from p2w_runtime.browser import EpisodeBrowser, EpisodeSettings, FinalStateData

MAX_AX_CHARS = 60_000
"""Bound of the recorded accessibility text of one step (the own agent shows its planner 12,000)."""
_TIMEOUT_MS = 15_000
ScreenshotPolicy = Literal["changed", "always", "never"]


@dataclass(frozen=True, slots=True)
class PageView:
    url: str
    title: str
    tabs: list[str]
    ax_text: str
    screenshot: bytes | None


class PageWatcher:
    """Reads a step's view of the agent's page, with a screenshot only when the policy asks for one.

    ``changed`` (the default) takes a screenshot when the URL or the ARIA snapshot differs from the previous view's
    and otherwise records the previous screenshot again (the same blob): a screenshot costs several times the
    snapshot, and a step that only thought, or asked the history, shows the same page. What the snapshot does not
    see (scrolling, hover, canvas) is not a change; ``always`` takes one every step, ``never`` none.
    """

    def __init__(self, *, max_chars: int = MAX_AX_CHARS) -> None:
        self.max_chars = max_chars
        self._seen: tuple[str, str] | None = None
        self._shot: bytes | None = None

    async def view(self, page: Page, screenshots: ScreenshotPolicy = "changed") -> PageView:
        """The page as the agent sees it now; a page that cannot be read yields its error as the tree text."""
        try:
            ax_text = await page.aria_snapshot(mode="ai", timeout=_TIMEOUT_MS)
        except PlaywrightError as exc:
            ax_text = f"(the page could not be read: {first_line(exc)})"
        if len(ax_text) > self.max_chars:
            ax_text = ax_text[: self.max_chars] + f"\n... ({len(ax_text) - self.max_chars} more characters)"
        seen = (page.url, ax_text)
        if screenshots == "always" or (screenshots == "changed" and seen != self._seen):
            self._shot = await _screenshot(page)
        shot = self._shot if screenshots != "never" else None
        self._seen = seen
        return PageView(page.url, await _title(page), [await _tab(tab) for tab in page.context.pages], ax_text, shot)


async def final_of(page: Page) -> FinalStateData:
    """The end-of-episode state of ``page``, captured by the browser package (best effort, errors listed)."""
    browser = EpisodeBrowser(page.context, page, EpisodeSettings(), _NO_HAR, None)
    return await browser.final_state()


_NO_HAR = Path("/nonexistent/p2w-recording.har")
"""Never read: the recorder does not close the agent's context (``EpisodeBrowser.close``), so its HAR is the
agent's business; pass ``har=`` to ``final_state`` to keep one."""


async def _screenshot(page: Page) -> bytes | None:
    try:
        return await page.screenshot(type="png", timeout=_TIMEOUT_MS)
    except PlaywrightError:
        return None


async def _title(page: Page) -> str:
    try:
        return await page.title()
    except PlaywrightError:
        return ""


async def _tab(page: Page) -> str:
    title = await _title(page)
    return f"{title} ({page.url})" if title else page.url


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
