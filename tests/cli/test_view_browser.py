"""`p2w-rt view` end to end in headless Chromium: browse the demo's runs, follow a judgment's evidence, compare,
and prove that a recorded page neither runs its scripts nor reaches the network. Each page is screenshotted into
the test's output folder (or ``$P2W_VIEW_SHOTS``) so a person can look."""

from __future__ import annotations

import asyncio
import re
import threading
from pathlib import Path

import pytest
from aiohttp import web
from playwright.async_api import Browser, Page

from tests.helpers.view_support import build_hostile_store, cli, serving

pytestmark = pytest.mark.slow


async def _page(browser: Browser) -> tuple[Page, list[str]]:
    """A page that records every dialog (an ``alert`` from recorded content would be one)."""
    page = await browser.new_page(viewport={"width": 1400, "height": 900})
    dialogs: list[str] = []

    async def dismiss(dialog) -> None:  # type: ignore[no-untyped-def]
        dialogs.append(dialog.message)
        await dialog.dismiss()

    page.on("dialog", dismiss)
    return page, dialogs


async def _images_decode(page: Page, selector: str) -> list[tuple[int, int]]:
    """Natural sizes of the matching images after loading them (lazy images are made eager first)."""
    return await page.eval_on_selector_all(
        selector,
        """async (imgs) => Promise.all(imgs.map(async (img) => {
            img.loading = "eager"; img.scrollIntoView();
            try { await img.decode(); } catch (e) { return [0, 0]; }
            return [img.naturalWidth, img.naturalHeight];
        }))""",
    )


async def test_runs_run_episode_and_a_judgments_evidence_highlights_the_cited_step(
    browser: Browser, demo_process_url: str, shots: Path
) -> None:
    page, dialogs = await _page(browser)
    await page.goto(demo_process_url)
    assert await page.locator("#runs-table tbody tr").count() == 2
    await page.fill("input.filter", "later")
    assert await page.locator("#runs-table tbody tr:visible").count() == 1
    await page.fill("input.filter", "")
    await page.screenshot(path=shots / "runs.png")

    await page.click("text=earlier")
    await page.wait_for_url("**/run/*")
    assert await page.locator("#episodes tbody tr").count() == 24
    await page.select_option("select[name=label]", "personalization_hallucination")
    await page.click("button:text('filter')")
    await page.wait_for_url("**label=personalization_hallucination**")
    assert await page.locator("#episodes tbody tr").count() == 1
    plots = await _images_decode(page, ".plots img")
    assert len(plots) == 2 and all(w > 0 and h > 0 for w, h in plots), f"the metrics and classify plots: {plots}"
    shown = await page.eval_on_selector_all(".plots img", "(imgs) => imgs.map((i) => [i.width, i.height])")
    assert shown == plots, "plots at their natural size (no CSS scaling), so their labels stay readable"
    await page.click("a:text('clear')")
    await page.wait_for_url("**/run/*")
    await _images_decode(page, ".plots img")
    await page.evaluate("window.scrollTo(0, 0)")
    await page.screenshot(path=shots / "run.png")

    await page.click("text=Tomas_Reyes_B1")
    await page.wait_for_url("**/episode/Tomas_Reyes_B1")
    sizes = await _images_decode(page, "img.shot")
    assert sizes and all(w > 0 and h > 0 for w, h in sizes), f"screenshots must decode: {sizes}"
    evidence = page.locator(".judgment tr:has-text('web.utilization') a.ev").first
    cited = await evidence.get_attribute("data-ev")
    await evidence.click()
    target = page.locator(f"#ev-{cited}")
    assert "highlight" in (await target.get_attribute("class") or "")
    step = page.locator(f".step.highlight:has(#ev-{cited})")
    assert await step.count() == 1, "the step holding the cited event is highlighted"
    assert await step.evaluate(
        "(el) => { const r = el.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; }"
    )
    assert page.url.endswith(f"#ev-{cited}")
    await page.screenshot(path=shots / "episode.png")
    await page.reload()
    assert "highlight" in (await page.locator(f"#ev-{cited}").get_attribute("class") or ""), (
        "a shared link highlights too"
    )
    assert not dialogs


async def test_compare_shows_the_demos_flips_and_the_two_trajectories_side_by_side(
    browser: Browser, demo_process_url: str, shots: Path
) -> None:
    page, _ = await _page(browser)
    await page.goto(demo_process_url)
    await page.click("button:text('compare')")
    await page.wait_for_url("**/compare?**")
    assert await page.text_content("#gained") == "7 gained" and await page.text_content("#lost") == "1 lost"
    row = page.locator("tr.task-row:has-text('Tomas_Reyes_B1')")
    assert await row.locator(".flip.gained").count() == 1
    side = page.locator("details.sbs[open]:has-text('Tomas_Reyes_B1') table.side")
    assert "memory_access" in (await side.text_content() or ""), "B asked the history where A guessed"
    delta = await page.locator("tr.delta td.num").all_text_contents()
    assert delta and all(re.fullmatch(r"[+-]\d\.\d{3}|-", d) for d in delta), f"deltas as the CLI prints: {delta}"
    await page.screenshot(path=shots / "compare.png", full_page=False)

    await page.go_back()
    await page.fill("input[name=judge]", "no-such-judge")
    await page.click("button:text('compare')")
    await page.wait_for_url("**judge=no-such-judge**")
    message = await page.text_content(".error-message") or ""
    assert "no-such-judge" in message and "rubric-rules" in message and "Traceback" not in message
    await page.screenshot(path=shots / "compare-unknown-judge.png")


async def test_a_memory_access_step_shows_its_reasoning_first_and_no_repeated_screenshot(
    browser: Browser, demo_process_url: str, shots: Path
) -> None:
    page, _ = await _page(browser)
    await page.goto(demo_process_url + "run/earlier/episode/Lena_Fischer_B1")
    step = page.locator("#step-2")
    why = await step.locator(".rationale.planner").first.bounding_box()
    query = await step.locator(".history").first.bounding_box()
    assert why and query and why["y"] < query["y"], "the reasoning is read before the history query it led to"
    assert await step.locator("img.shot").count() == 0
    await step.locator(".shot-same a").first.click()
    await page.wait_for_url("**#step-1")
    assert await page.locator("#step-1 img.shot").count() == 1
    sizes = await _images_decode(page, "img.shot")
    assert sizes and all(w > 0 for w, _ in sizes)
    await page.locator("#step-2").scroll_into_view_if_needed()
    await page.screenshot(path=shots / "episode-memory-access.png")


class Beacon:
    """A local HTTP server standing in for the recorded site: any request to it means the sandbox leaked."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.url = ""

    def __enter__(self) -> Beacon:
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(timeout=30)
        return self

    async def _start(self) -> None:
        async def record(request: web.Request) -> web.Response:
            self.requests.append(request.path)
            return web.Response(text="alert('beacon')", content_type="application/javascript")

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", record)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"  # type: ignore[union-attr]

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)


async def test_a_recorded_page_runs_no_script_and_loads_nothing_remote(
    browser: Browser, tmp_path: Path, shots: Path
) -> None:
    with Beacon() as beacon:
        db = tmp_path / "hostile.db"
        ids = await build_hostile_store(db, beacon.url)
        probe = await browser.new_page()  # an unsandboxed page does reach it (an image, so no favicon request)
        await probe.set_content(f'<img id="probe" src="{beacon.url}/probe">')
        await probe.wait_for_function("document.getElementById('probe').complete")
        assert beacon.requests == ["/probe"], "the beacon is reachable from this browser"
        await probe.close()
        beacon.requests.clear()
        with serving(db, cwd=tmp_path) as url:
            page, dialogs = await _page(browser)
            await page.goto(url + f"run/{ids['run_id']}/episode/{ids['episode_id']}")
            frame_el = page.locator("iframe.dom-frame")
            await frame_el.scroll_into_view_if_needed()
            frame = await (await frame_el.element_handle()).content_frame()  # type: ignore[union-attr]
            assert frame is not None
            await frame.wait_for_selector("#recorded-heading")
            await page.wait_for_timeout(1500)
            assert await page.title() != "pwned"
            await page.screenshot(path=shots / "sandbox.png")
            direct, direct_dialogs = await _page(browser)
            await direct.goto(url + f"dom/{ids['dom']}")  # the recorded page opened on its own: the CSP holds alone
            await direct.wait_for_selector("#recorded-heading")
            await direct.wait_for_timeout(1500)
        out = tmp_path / "export"
        result = cli("view", "--db", str(db), "--export", str(out), ids["run_id"], cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        exported, exported_dialogs = await _page(browser)
        episode_file = next(out.glob("episode-*.html"))
        await exported.goto(episode_file.as_uri())
        await exported.wait_for_timeout(1500)
        assert beacon.requests == [], f"recorded content reached the network: {beacon.requests}"
        assert dialogs == direct_dialogs == exported_dialogs == []


async def test_the_static_export_opens_from_disk(browser: Browser, demo: Path, tmp_path: Path, shots: Path) -> None:
    out = tmp_path / "export"
    result = cli("view", "--db", str(demo), "--export", str(out), "earlier", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    page, _ = await _page(browser)
    await page.goto((out / "index.html").as_uri())
    await page.click("text=earlier")
    await page.fill("input.filter", "Tomas_Reyes_B1")
    assert await page.locator("#episodes tbody tr:visible").count() == 1
    await page.click("#episodes >> text=Tomas_Reyes_B1")
    sizes = await _images_decode(page, "img.shot")
    assert sizes and all(w > 0 and h > 0 for w, h in sizes)
    await page.locator(".judgment a.ev").first.click()
    assert await page.locator(".step.highlight").count() >= 1
    await page.screenshot(path=shots / "export-episode.png")
