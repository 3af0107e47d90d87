"""The observation that opens each step of a recorded episode: given by the agent and staged at once, or read off
its page behind it while it thinks, the model calls that end meanwhile held to be staged after it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime

from playwright.async_api import Page

from p2w_rt.schemas import LlmCall, NewEvent, Observation
from p2w_runtime.domain import EpisodeWriter
from p2w_runtime.recording._page import PageWatcher, ScreenshotPolicy


class StepObserver:
    """Stages an episode's observations through its writer, one page read at most in flight."""

    def __init__(self, writer: EpisodeWriter) -> None:
        self.writer = writer
        self._watcher = PageWatcher()
        self._capture: asyncio.Task[None] | None = None
        """The page read of the latest observation, running behind the agent."""
        self._held: list[NewEvent] = []
        """Model calls that ended while that read was running, staged after its observation."""

    def read(self, page: Page, step: int, at: datetime, screenshots: ScreenshotPolicy, description: str | None) -> None:
        """Start reading ``page`` as step ``step``'s observation (recorded at ``at``), behind the caller."""
        self._capture = asyncio.create_task(self._read(page, step, at, screenshots, description))

    async def _read(
        self, page: Page, step: int, at: datetime, screenshots: ScreenshotPolicy, description: str | None
    ) -> None:
        view = await self._watcher.view(page, screenshots)
        self.given(step, at, view.url, view.title, view.tabs, view.ax_text, view.screenshot, description)
        held, self._held = self._held, []
        self.writer.extend(held)

    def given(
        self,
        step: int,
        at: datetime,
        url: str,
        title: str,
        tabs: Sequence[str],
        ax_tree: str | None,
        screenshot: bytes | None,
        description: str | None,
    ) -> None:
        """Stage step ``step``'s observation from values the agent has."""
        observation = Observation(
            step=step,
            url=url,
            title=title,
            tabs=list(tabs),
            description=description,
            ax_tree=self.writer.blob(ax_tree.encode()) if ax_tree is not None else None,
            screenshot=self.writer.blob(screenshot) if screenshot else None,
        )
        self.writer.extend([NewEvent(stream=self.writer.stream, payload=observation, recorded_at=at)])

    async def done(self) -> None:
        """Wait for the page read in progress (its observation and the calls it held are staged when it ends)."""
        if self._capture is not None:
            await self._capture
            self._capture = None

    def stage(self, call: LlmCall) -> None:
        """Stage a model call, after the observation being read if one is."""
        if self._capture is not None and not self._capture.done():
            self._held.append(NewEvent(stream=self.writer.stream, payload=call))
        else:
            self.writer.add(call)
