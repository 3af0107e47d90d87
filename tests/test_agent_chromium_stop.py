"""The Chromium an outside agent drives ends whole, however its episode ends: no process of it left running and its
profile removed. Its helpers (renderer, network, GPU) outlive the browser process for a moment and wrote into the
profile after its removal on a loaded machine, so ``record --exec`` interrupted by Ctrl-C left a ``p2w-exec-*``
folder in the temp dir (issue 36). Real Chromium processes, found by their command line."""

from __future__ import annotations

import asyncio
import os
import signal
import tempfile
from pathlib import Path

import pytest
from playwright.async_api import async_playwright

from p2w_runtime.browser import find_chromium
from p2w_runtime.exec import ObservedChromium


def running_with(text: str) -> list[int]:
    """Live (not zombie) processes whose command line names ``text``."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if text in cmdline and state != "Z":
            found.append(int(proc.name))
    return found


@pytest.mark.parametrize("ending", ["cancelled", "returned"])
async def test_the_agent_chromium_leaves_no_process_and_no_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ending: str
) -> None:
    """A renderer stopped (SIGSTOP) stands for a helper a loaded machine has not scheduled yet: it outlives the
    browser process, and is killed with Chromium's process group when it does not end by itself."""
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
        renderers = running_with("--type=renderer")
        helpers = running_with(str(tmp_path))
        assert helpers, "the browser and its helpers run with the profile in tmp_path"
        lagging = next(pid for pid in helpers if pid in renderers)
        os.kill(lagging, signal.SIGSTOP)
        if ending == "cancelled":
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        else:
            await task
    left = running_with(str(tmp_path))
    for pid in left:  # a failed check leaves nothing running either
        os.kill(pid, signal.SIGKILL)
    assert left == [], "no process of that Chromium left running, the lagging renderer included"
    assert list(tmp_path.iterdir()) == [], "its profile removed, nothing else left"
