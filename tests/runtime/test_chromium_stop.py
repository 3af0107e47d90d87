"""A Chromium p2w-rt starts ends whole, however its episode ends: no process of it left running and its profile
removed; the outside agent's (``record --exec``) and Browser-Use's. Its helpers (renderer, network, GPU) outlive the
browser process for a moment and wrote into the profile after its removal on a loaded machine, so ``record --exec``
interrupted by Ctrl-C left a ``p2w-exec-*`` folder in the temp dir (issue 36). Real Chromium processes, found by their
command line (``running_with``, what the stop waits on, shown to find them while they run)."""

from __future__ import annotations

import asyncio
import os
import signal
import tempfile
from pathlib import Path

import pytest
from playwright.async_api import async_playwright

from p2w_runtime.browser import find_chromium, running_with
from p2w_runtime.exec import ObservedChromium
from p2w_runtime.integrations.browser_use import browser_use_session

pytestmark = pytest.mark.slow  # real Chromium


@pytest.mark.parametrize("ending", ["cancelled", "returned"])
async def test_the_agent_chromium_leaves_no_process_and_no_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ending: str
) -> None:
    """A renderer stopped (SIGSTOP) stands for a helper a loaded machine has not scheduled yet: it outlives the
    browser process, and is killed when it does not end by itself."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where its profile is made
    started = asyncio.Event()

    async def episode(chromium: ObservedChromium) -> None:
        async with chromium:
            page = await (await chromium.browser.new_context()).new_page()  # type: ignore[union-attr]
            await page.set_content("<p>a second renderer</p>")
            started.set()
            if ending == "cancelled":
                await asyncio.sleep(600)  # Ctrl-C while the agent works

    async with async_playwright() as playwright:
        chromium = ObservedChromium(playwright, find_chromium(None), [], "data:text/html,<p>start</p>")
        task = asyncio.create_task(episode(chromium))
        await started.wait()
        stop_a_renderer(str(tmp_path))
        if ending == "cancelled":
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        else:
            await task
    assert_nothing_left(tmp_path)


def stop_a_renderer(profile_text: str) -> None:
    """SIGSTOP one renderer of the Chromium running with ``profile_text`` in its command line."""
    renderers = running_with("--type=renderer")
    helpers = running_with(profile_text)
    assert helpers, "the browser and its helpers run with the profile"
    lagging = next(pid for pid in helpers if pid in renderers)
    os.kill(lagging, signal.SIGSTOP)


def assert_nothing_left(tmp_path: Path) -> None:
    """No process of the Chromium whose profile was in ``tmp_path`` still runs (the lagging renderer included),
    and ``tmp_path`` is empty: its profile and Chromium's socket folder removed."""
    left = running_with(str(tmp_path))
    for pid in left:  # a failed check leaves nothing running either
        os.kill(pid, signal.SIGKILL)
    assert left == [], "no process of that Chromium left running, the lagging renderer included"
    assert list(tmp_path.iterdir()) == [], "its profile removed, nothing else left"


async def test_a_browser_use_session_cancelled_leaves_no_process_and_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where its folder is made
    started = asyncio.Event()

    async def episode() -> None:
        async with browser_use_session(find_chromium(None), []) as session:
            await session.start()
            await session.navigate_to("data:text/html,<p>a page</p>")
            started.set()
            await asyncio.sleep(600)  # Ctrl-C while the agent works

    task = asyncio.create_task(episode())
    await started.wait()
    stop_a_renderer(str(tmp_path))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert_nothing_left(tmp_path)
