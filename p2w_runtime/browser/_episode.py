"""One episode's browser: its own BrowserContext (cookies, HAR), its tabs, what the agent sees, how it ends."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import structlog
from playwright.async_api import BrowserContext, Page
from playwright.async_api import Error as PlaywrightError

from p2w_rt.schemas import ParsedAction
from p2w_runtime.browser._axtext import AxLine, bound_text, lines_to_text, render_snapshot
from p2w_runtime.browser._blocking import detect_block
from p2w_runtime.browser._capture import CapturedPage, capture_in
from p2w_runtime.browser._errors import BrowserGone
from p2w_runtime.browser._errors import first_line as _first_line
from p2w_runtime.browser._execute import execute_action
from p2w_runtime.browser._har import scrub_har
from p2w_runtime.browser._refs import ElementIds
from p2w_runtime.browser._stylesheets import collect_stylesheets
from p2w_runtime.browser._types import ExecResult, FinalStateData, ObservationData

log = structlog.get_logger()
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class EpisodeSettings:
    """Per-episode knobs; every wait the browser does is bounded by one of these timeouts."""

    navigation_timeout_s: float = 15.0
    """goto / back / forward, clicks and Enter presses that navigate, page loads."""
    action_timeout_s: float = 5.0
    """Element actions that do not navigate (fill, hover) and page queries."""
    max_chars: int = 12_000
    """Bound of the accessibility text the agent reads per step."""
    viewport_width: int = 1280
    viewport_height: int = 720
    screenshots: bool = True
    har_content: Literal["omit", "embed"] = "omit"
    """Response bodies in the HAR: omitted by default (the final DOM is recorded separately)."""


_REFLECT_FORM_VALUES = """() => {
  for (const el of document.querySelectorAll("input, textarea, select")) {
    if (el.type === "checkbox" || el.type === "radio") el.toggleAttribute("checked", el.checked);
    else if (el.tagName === "TEXTAREA") el.textContent = el.value;
    else if (el.tagName === "SELECT") for (const o of el.options) o.toggleAttribute("selected", o.selected);
    else if (el.type !== "password") el.setAttribute("value", el.value);
  }
}"""


class EpisodeBrowser:
    """The browser as one episode sees it; created by ``BrowserSession.new_context``.

    The active tab is the one the agent acts on: ``new_tab`` and pop-ups opened by the agent's actions become
    active, ``tab_focus`` switches, and when the active tab closes the last remaining tab takes over.
    """

    def __init__(
        self,
        context: BrowserContext,
        page: Page,
        settings: EpisodeSettings,
        har_path: Path,
        scratch: Path | None,
    ) -> None:
        self.context = context
        self.settings = settings
        self.ids = ElementIds()
        self._active = page
        self._har_path = har_path
        self._scratch = scratch
        self._har: bytes | None = None
        self._opened: list[Page] = []
        context.on("page", self._on_page)

    def _on_page(self, page: Page) -> None:
        self._opened.append(page)

    async def current_page(self) -> Page:
        """The active tab: the newest tab opened since the last call (``new_tab``, a pop-up), else the tab in focus;
        if that closed, the last open tab, and a fresh blank tab if none is left. ``BrowserGone`` once Chromium
        exited."""
        browser = self.context.browser
        if browser is not None and not browser.is_connected():
            raise BrowserGone("Chromium exited during the episode (killed or crashed)")
        opened = [page for page in self._opened if not page.is_closed()]
        self._opened.clear()
        if opened:
            self._active = opened[-1]
        if self._active.is_closed():
            pages = self.context.pages
            self._active = pages[-1] if pages else await self.context.new_page()
        return self._active

    @property
    def pages(self) -> list[Page]:
        return list(self.context.pages)

    def activate(self, page: Page) -> None:
        self._active = page

    async def observe(self) -> ObservationData:
        """What the agent reads this step: URL, title, tabs, the bounded numbered tree, a viewport screenshot."""
        page = await self.current_page()
        await self.settle(page)
        lines = await self._snapshot(page)
        ax_text = bound_text(lines, self.settings.max_chars) if lines else "(empty page)"
        screenshot = await self._screenshot(page, full_page=False) if self.settings.screenshots else None
        pages = self.pages
        return ObservationData(
            url=page.url,
            title=await self._title(page),
            tabs=[await self._tab_label(tab) for tab in pages],
            active_tab=pages.index(page),
            ax_text=ax_text,
            screenshot_png=screenshot,
            blocked=await detect_block(page, self.settings.action_timeout_s),
        )

    async def execute(self, action: ParsedAction) -> ExecResult:
        """Run one browser action of the grammar on the active tab; see ``ExecResult`` for the outcomes.

        ``stop``, ``note`` and ``memory_access`` are the agent loop's business and raise ``ValueError`` here.
        """
        return await execute_action(self, action)

    async def capture(self, urls: Sequence[str]) -> list[CapturedPage]:
        """Each URL in a new tab of this episode's context (a curation's product links, at its end)."""
        return await capture_in(self.context, urls)

    async def final_state(self) -> FinalStateData:
        """The state offline checks need; best effort, so a broken page still yields a record with its errors."""
        page = await self.current_page()
        errors: list[str] = []
        if settle_error := await self.settle(page):
            errors.append(settle_error)
        # typed values live in DOM properties, not attributes: copy them over so the recorded HTML
        # shows them (WebArena's program_html checks read `.value` from the final page offline)
        await self.bounded(page.evaluate(_REFLECT_FORM_VALUES), self.settings.action_timeout_s, errors, "form values")
        html = await self.bounded(page.content(), self.settings.navigation_timeout_s, errors, "dom_html")
        timeout_s = self.settings.navigation_timeout_s
        stylesheets = await self.bounded(collect_stylesheets(page, timeout_s), timeout_s, errors, "stylesheets")
        lines = await self._snapshot(page)
        screenshot = await self._screenshot(page, full_page=True, errors=errors)
        return FinalStateData(
            url=page.url,
            title=await self._title(page),
            dom_html=(html or "").encode(),
            ax_tree=lines_to_text(lines).encode(),
            screenshot=screenshot or b"",
            stylesheets=stylesheets or b"",
            errors=errors,
        )

    async def close(self) -> bytes:
        """Close the context and return its HAR with cookies and auth headers removed (idempotent)."""
        if self._har is not None:
            return self._har
        try:
            await self.context.close()
        except PlaywrightError as exc:
            log.warning("browser.context_close_failed", error=str(exc).splitlines()[0])
        raw = self._har_path.read_bytes() if self._har_path.exists() else b""
        self._har = scrub_har(raw) if raw else b""
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
        elif raw:
            self._har_path.write_bytes(self._har)
        return self._har

    async def settle(self, page: Page) -> str | None:
        """Wait (bounded) for the page's document to be parsed; on timeout stop loading and say so."""
        try:
            await page.wait_for_load_state("domcontentloaded", timeout=self.settings.navigation_timeout_s * 1000)
        except PlaywrightError as exc:
            await self.stop_loading(page)
            return f"page did not finish loading within {self.settings.navigation_timeout_s:g}s: {_first_line(exc)}"
        return None

    async def stop_loading(self, page: Page) -> None:
        """Abort a pending navigation. Through CDP, because page scripts wait for the navigation they would stop."""
        try:
            await self._cdp(page, "Page.stopLoading")
        except (PlaywrightError, TimeoutError) as exc:
            log.warning("browser.stop_loading_failed", error=_first_line(exc))

    async def navigation_history(self, page: Page) -> tuple[int, int]:
        """(current index, number of entries) of the tab's history, which Playwright does not expose."""
        history = await self._cdp(page, "Page.getNavigationHistory")
        return int(history["currentIndex"]), len(history["entries"])

    async def _cdp(self, page: Page, method: str) -> dict[str, Any]:
        """One CDP command on ``page``, bounded by ``action_timeout_s`` (``TimeoutError``): a page whose main thread
        never yields (a script looping on ``alert()``) answers no CDP detach, and the step waited for it forever."""
        cdp = await self.context.new_cdp_session(page)
        try:
            return await asyncio.wait_for(cdp.send(method), self.settings.action_timeout_s)
        finally:
            with contextlib.suppress(PlaywrightError, TimeoutError):
                await asyncio.wait_for(cdp.detach(), self.settings.action_timeout_s)

    async def bounded(self, awaitable: Awaitable[T], timeout_s: float, errors: list[str], what: str) -> T | None:
        """Await with a deadline; a failure is appended to ``errors`` and yields None."""
        try:
            return await asyncio.wait_for(awaitable, timeout_s)
        except (PlaywrightError, TimeoutError) as exc:
            errors.append(f"{what}: {_first_line(exc) or 'timed out'}")
            return None

    async def _snapshot(self, page: Page) -> list[AxLine]:
        timeout_ms = self.settings.navigation_timeout_s * 1000
        try:
            raw = await page.aria_snapshot(mode="ai", boxes=True, timeout=timeout_ms)
        except PlaywrightError:
            await self.stop_loading(page)
            try:
                raw = await page.aria_snapshot(mode="ai", boxes=True, timeout=timeout_ms)
            except PlaywrightError as exc:
                return [AxLine(0, f"(the page could not be read: {_first_line(exc)})", None)]
        return render_snapshot(raw, lambda ref: self.ids.id_for(page, ref))

    async def _screenshot(self, page: Page, *, full_page: bool, errors: list[str] | None = None) -> bytes | None:
        try:
            return await page.screenshot(
                type="png", full_page=full_page, timeout=self.settings.navigation_timeout_s * 1000
            )
        except PlaywrightError as exc:
            if errors is not None:
                errors.append(f"screenshot: {_first_line(exc)}")
            return None

    async def _title(self, page: Page) -> str:
        return await self.bounded(page.title(), self.settings.action_timeout_s, [], "title") or ""

    async def _tab_label(self, page: Page) -> str:
        title = await self._title(page)
        return f"{title} ({page.url})" if title else page.url
