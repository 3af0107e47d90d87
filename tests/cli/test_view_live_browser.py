"""A run being recorded, watched: ``p2w-rt record`` runs against ``p2w-rt demo-model serve`` in its own process while
the run page is open in Chromium; the episode the recorder is in shows in the "In flight" table within two of the
page's reloads, its steps so far grow as the page reloads, and once the run finishes it is a counted episode and the
table is gone. Screenshots go to the test's folder (or ``$P2W_VIEW_SHOTS``)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Locator, Page, expect
from playwright.async_api import Error as PlaywrightError

from p2w_runtime.store import open_store
from tests.helpers.view_support import serving

pytestmark = pytest.mark.slow
P2W_RT = str(Path(sys.executable).with_name("p2w-rt"))


@pytest.fixture
def demo_model() -> Iterator[str]:
    """``p2w-rt demo-model serve --port 0 --latency 0.4``; yields its base URL. The latency keeps each episode in
    flight for seconds, as a hosted model would: without it a fast machine records all three between two reloads."""
    serve = [P2W_RT, "demo-model", "serve", "--port", "0", "--latency", "0.4"]
    proc = subprocess.Popen(serve, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().split()[3].rstrip(",")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _listed_runs(url: str) -> list[dict[str, object]]:
    with urllib.request.urlopen(url + "api/runs", timeout=30) as response:
        rows: list[dict[str, object]] = json.load(response)
    return rows


async def _until_moved_on(page: Page, row: Locator, task: str, steps: int, *, within_s: float) -> None:
    """Wait until the in-flight ``row`` shows more than ``steps``, or its episode is listed as finished (it finished
    between two reloads: a fast episode on a busy machine may never show a second count). A page caught in the
    middle of a reload, its in-flight table not parsed yet, is neither: look again."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            if await row.count():
                if int(await row.locator(".steps-so-far").text_content(timeout=2_000) or "0") > steps:
                    return
            elif task in (await page.text_content("#episodes", timeout=2_000) or ""):
                return
        except PlaywrightError:
            pass  # the page reloaded between two reads: look again
        assert time.monotonic() < deadline, f"the in-flight steps stayed at {steps} for {within_s} s"
        await asyncio.sleep(0.25)


_ROWS = """() => {
    const usage = [...document.querySelectorAll('.usage-table tbody tr')].map((row) => row.textContent);
    return [
        document.querySelectorAll('#in-flight tbody tr').length,
        usage.filter((text) => text.includes('in flight')).length,
        usage.filter((text) => text.includes('other attempts')).length,
    ];
}"""


async def _while_in_flight(page: Page, *, within_s: float) -> tuple[int, int, int]:
    """(in-flight episodes, usage rows "in flight", usage rows "other attempts") read at once from one state of the
    page in which an episode is in flight and has spent tokens (a reload between two reads could show the next
    state)."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            flying, usage, other = await page.evaluate(_ROWS)
        except PlaywrightError:  # the page reloaded while it was read
            flying, usage, other = 0, 0, 0
        if (flying and usage) or time.monotonic() > deadline:  # an episode that made no call yet has no tokens
            return flying, usage, other
        await asyncio.sleep(0.25)


async def test_an_episode_in_flight_shows_with_its_steps_while_record_runs(
    browser: Browser, demo_model: str, tmp_path: Path, shots: Path
) -> None:
    db = tmp_path / "live.db"
    async with open_store(db):
        pass  # the viewer opens an existing store; the recorder appends to it
    record = [P2W_RT, "--db", str(db), "record", "--base-url", demo_model, "--model", "scripted-model"]
    record += ["--level", "2", "--limit", "3", "--label", "watched", "--concurrency", "1"]
    with serving(db, cwd=tmp_path) as url:
        recorder = subprocess.Popen(record, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
        try:
            deadline = time.monotonic() + 180
            while not _listed_runs(url):
                assert recorder.poll() is None, recorder.communicate()
                assert time.monotonic() < deadline, "the recorder started no run"
                time.sleep(0.5)
            page = await browser.new_page(viewport={"width": 1400, "height": 1000})
            loads: list[str] = []
            page.on("load", lambda: loads.append(page.url))
            await page.goto(url + "run/watched")
            assert await page.text_content("#run-status") == "recording"
            flying = page.locator("#in-flight tbody tr")
            await expect(flying).not_to_have_count(0, timeout=30_000)
            assert len(loads) <= 3, f"an episode in flight shows within two reloads of the page: {loads}"
            assert "in flight" in (await flying.first.locator(".end-in-flight").text_content() or "")
            task = await flying.first.locator("a").first.text_content() or ""
            row = page.locator("#in-flight tbody tr", has=page.locator("a", has_text=task))
            steps = int(await row.locator(".steps-so-far").text_content() or "0")
            await _until_moved_on(page, row, task, steps, within_s=30)
            flying_now, usage_rows, other_rows = await _while_in_flight(page, within_s=60)
            assert flying_now and usage_rows == 1, "the in-flight tokens are their own row, not 'other attempts'"
            assert other_rows == 0
            await page.screenshot(path=shots / "run-live.png", full_page=True)

            out, err = recorder.communicate(timeout=300)
            assert recorder.returncode == 0, err
            await expect(page.locator("#run-status")).to_have_text("completed", timeout=30_000)
            assert await page.locator("#in-flight").count() == 0
            assert await page.locator("#episodes tbody tr").count() == 3
            assert task in (await page.text_content("#episodes") or "")
        finally:
            if recorder.poll() is None:
                recorder.kill()
                recorder.communicate()
