"""The Chromium an outside agent drives: started by p2w-rt with a debugging port the agent attaches to.

p2w-rt starts the browser itself (``--remote-debugging-port``), so the agent needs no code of ours: it attaches to
``P2W_CDP_URL`` (Playwright's ``connect_over_cdp`` in any language, or raw CDP) and finds the task's start page
open in the default context. p2w-rt attaches with its own Playwright connection, through which it can keep a HAR
of every page the agent loads (``record --exec --har``) or serve the pages from a recorded one instead of the
network (``rerun --exec --restore har``): Playwright routes a context's requests for every client attached to it.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Self

from playwright.async_api import Browser, BrowserContext, Page, Playwright

from p2w_runtime.browser import LAUNCH_ARGS, close_profile
from p2w_runtime.errors import UserError
from p2w_runtime.exec._agent_process import dies_with_p2w
from p2w_runtime.scratch import new_scratch_folder

_START_S = 60.0
"""How long Chromium may take to open its debugging port (a loaded 2-core machine takes seconds)."""
_STOP_S = 10.0
"""How long Chromium may take to exit once asked to, then once terminated."""


class AgentChromium:
    """One episode's Chromium: ``async with`` starts it at ``start_url``; ``cdp_url`` is what the agent attaches to.

    ``keep_har``: record the agent's pages with their bodies (``har()`` returns them); ``serve_har``: answer the
    agent's requests from this HAR (requests it lacks go to the network)."""

    def __init__(
        self,
        playwright: Playwright,
        executable: str,
        extra_args: list[str],
        start_url: str,
        *,
        keep_har: bool = False,
        serve_har: bytes | None = None,
    ) -> None:
        self._pw = playwright
        self._executable = executable
        self._args = extra_args
        self._start_url = start_url
        self._keep_har = keep_har
        self._serve_har = serve_har
        self._profile = ""
        self._process: asyncio.subprocess.Process | None = None
        self.browser: Browser | None = None
        self.cdp_url = ""

    async def __aenter__(self) -> Self:
        self._profile = str(new_scratch_folder("exec"))
        launch = [
            self._executable,
            "--headless",
            "--remote-debugging-port=0",
            "--remote-debugging-address=127.0.0.1",
            f"--user-data-dir={self._profile}",
            *LAUNCH_ARGS,
            *self._args,
            "about:blank",
        ]
        try:
            self._process = await asyncio.create_subprocess_exec(
                *dies_with_p2w(launch),
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
            )
            port = await self._debugging_port()
            self.cdp_url = f"http://127.0.0.1:{port}"
            self.browser = await self._pw.chromium.connect_over_cdp(self.cdp_url)
            context = self.browser.contexts[0]
            if self._keep_har:
                await context.route_from_har(self._har_path, update=True, update_content="embed")
            elif self._serve_har is not None:
                self._har_path.write_bytes(self._serve_har)
                await context.route_from_har(self._har_path, not_found="fallback")
            page = context.pages[0] if context.pages else await context.new_page()
            self.opened(page)
            await page.goto(self._start_url, wait_until="domcontentloaded")
            self.started()
        except BaseException:
            await self._stop()
            raise
        return self

    async def __aexit__(self, *_: object) -> None:
        await self._stop()

    def opened(self, page: Page) -> None:
        """Called with the start page before it loads (and, by a subclass that follows pages, with later ones)."""

    def started(self) -> None:
        """Called once the start page loaded, before the agent starts."""

    @property
    def context(self) -> BrowserContext | None:
        """The default context, which the agent's pages open in."""
        return self.browser.contexts[0] if self.browser is not None and self.browser.contexts else None

    @property
    def _har_path(self) -> Path:
        return Path(self._profile) / "episode.har"

    async def har(self) -> bytes | None:
        """The HAR kept so far (``keep_har``), bodies embedded: Playwright writes it when the context closes, so
        this closes the context, and the agent's pages with it."""
        if not self._keep_har or (context := self.context) is None:
            return None
        with contextlib.suppress(Exception):  # a browser the agent closed leaves what Playwright wrote
            await context.close()
        return self._har_path.read_bytes() if self._har_path.is_file() else None

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
        """Chromium asked to close over CDP, as it closes by itself: terminated, it left its socket folder in the temp
        dir and its network process still writing into the profile being removed. Terminated, then killed, only when
        it does not exit; its helpers waited for (or killed) before the profile is removed, however this ends (an
        interrupted stop included)."""
        process = self._process
        try:
            closing = False
            if self.browser is not None:
                with contextlib.suppress(Exception):
                    await (await self.browser.new_browser_cdp_session()).send("Browser.close")
                    closing = True
                with contextlib.suppress(Exception):
                    await self.browser.close()
                self.browser = None
            if process is not None and process.returncode is None and not (closing and await _exited(process, _STOP_S)):
                process.terminate()
                if not await _exited(process, _STOP_S):
                    process.kill()
                    await process.wait()
        finally:
            await close_profile(self._profile)


async def _exited(process: asyncio.subprocess.Process, timeout_s: float) -> bool:
    try:
        await asyncio.wait_for(process.wait(), timeout_s)
    except TimeoutError:
        return False
    return True
