"""The run-level pages in headless Chromium against a real viewer process: the search box of every page, sorting and
failures first, the usage chart, and a run being recorded whose page reloads itself as episodes are appended
through the recording API, then stops once the run finishes. Screenshots go to the test's folder (or
``$P2W_VIEW_SHOTS``), as in test_view_browser.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, expect

from p2w_runtime.recording import Recording, open_run
from p2w_runtime.store import open_store
from tests.helpers.recording_tasks import Sketch
from tests.helpers.view_support import serving

pytestmark = pytest.mark.slow


async def _page(browser: Browser) -> Page:
    return await browser.new_page(viewport={"width": 1400, "height": 900})


async def _polling_page(browser: Browser) -> tuple[Page, list[str]]:
    """A page, and the URLs of the live polls it makes, as it makes them."""
    page = await _page(browser)
    polls: list[str] = []
    page.on("request", lambda request: polls.append(request.url) if request.url.endswith("/live") else None)
    return page, polls


async def _column(page: Page, title: str) -> list[str]:
    """The texts of the episode table's column headed ``title``."""
    return await page.evaluate(
        """(title) => {
            const table = document.getElementById("episodes");
            const index = Array.from(table.tHead.rows[0].cells).findIndex((th) => th.textContent.trim() === title);
            return Array.from(table.tBodies[0].rows).map((row) => row.cells[index].textContent.trim());
        }""",
        title,
    )


async def test_the_search_box_finds_episodes_of_every_run_and_links_them(
    browser: Browser, demo_process_url: str, shots: Path
) -> None:
    page = await _page(browser)
    await page.goto(demo_process_url + "run/earlier/episode/Lena_Fischer_B1")
    await page.fill(".search-box input[name=q]", "hallucination")
    await page.press(".search-box input[name=q]", "Enter")
    await page.wait_for_url("**/search?q=hallucination")
    rows = page.locator("#results tbody tr")
    assert await rows.count() == 1 and "personalization_hallucination" in (await rows.first.text_content() or "")
    await page.fill(".search-form input[name=q]", "running shoes")
    await page.select_option("select[name=in]", "query")
    await page.click("button:text('search')")
    await page.wait_for_url("**in=query**")
    assert await rows.count() == 4
    assert await page.input_value(".search-box input[name=q]") == "running shoes", "the header box shows the search"
    await page.screenshot(path=shots / "search.png")
    await rows.nth(2).locator("a", has_text="Tomas_Reyes_B1").click()
    await page.wait_for_url("**/episode/Tomas_Reyes_B1")
    assert "later" in (await page.text_content("header nav") or "")
    await page.goto(demo_process_url + "search?q=%00")
    assert "control character" in (await page.text_content(".error-message") or "")


async def test_sorting_by_a_score_and_failures_first_in_the_browser(
    browser: Browser, demo_process_url: str, shots: Path
) -> None:
    page = await _page(browser)
    await page.goto(demo_process_url + "run/earlier")
    await page.click("#episodes thead a:text-is('P_avg')")
    await page.wait_for_url("**sort=p_avg**")
    ascending = [float(x) for x in await _column(page, "P_avg")]
    assert ascending == sorted(ascending) and ascending[0] < ascending[-1]
    await page.click("#episodes thead a:text-is('P_avg')")
    await page.wait_for_url("**order=desc**")
    assert [float(x) for x in await _column(page, "P_avg")] == sorted(ascending, reverse=True)
    assert await page.get_attribute("#episodes th[aria-sort]", "aria-sort") == "descending"

    await page.click("a.failures-first")
    await page.wait_for_url("**sort=failures**")
    sr = await _column(page, "SR")
    assert sr == sorted(sr, key=lambda mark: mark == "✓") and sr[0] == "✗" and sr[-1] == "✓"
    assert (await _column(page, "task"))[0] == "Tomas_Reyes_B1"
    await page.select_option("select[name=sort]", "tokens")
    await page.select_option("select[name=order]", "desc")
    await page.click("button:text('filter')")
    await page.wait_for_url("**sort=tokens**")
    tokens = [int(x.replace(",", "")) for x in await _column(page, "tokens")]
    assert tokens == sorted(tokens, reverse=True) and tokens[0] > 0

    chart = page.locator(".usage-chart img")
    size = await chart.evaluate(
        "async (img) => { img.loading = 'eager'; await img.decode(); return [img.naturalWidth, img.naturalHeight]; }"
    )
    assert size[0] > 600 and size[1] > 400, f"the time, tokens and cost chart decodes: {size}"
    await page.evaluate("window.scrollTo(0, document.querySelector('.usage').offsetTop - 50)")
    await page.screenshot(path=shots / "run-usage.png")


async def _episode(run: Recording, task: str) -> None:
    async with run.episode(task) as episode:
        await episode.observe(url="http://shop.example/", title=f"shop for {task}")
        await episode.action("stop [done]")
        await episode.end("answered", f"answer of {task}")


async def test_a_run_being_recorded_reloads_as_episodes_finish_and_stops_when_it_finishes(
    browser: Browser, tmp_path: Path, shots: Path
) -> None:
    db = tmp_path / "live.db"
    tasks = [Sketch(f"T{i}", f"task {i}") for i in range(1, 4)]
    async with open_store(db) as store:
        run = await open_run(store, label="live", agent="mine", model="m", tasks=tasks)
        await _episode(run, "T1")
        with serving(db, cwd=tmp_path) as url:
            page, polls = await _polling_page(browser)
            await page.goto(url + "run/live")
            assert await page.text_content("#run-status") == "recording"
            assert await page.locator("#live").is_visible()
            assert await page.locator("#episodes tbody tr").count() == 1
            await _episode(run, "T2")  # appended while the page is open
            await expect(page.locator("#episodes tbody tr")).to_have_count(2, timeout=60_000)
            assert await page.text_content("#run-status") == "recording" and polls, "it polled, then reloaded"
            await page.screenshot(path=shots / "run-recording.png")

            await _episode(run, "T3")
            await run.close()  # run.finished
            await expect(page.locator("#run-status")).to_have_text("completed", timeout=60_000)
            assert await page.locator("#episodes tbody tr").count() == 3
            assert await page.locator("#live").count() == 0
            polls.clear()
            await page.wait_for_timeout(5_000)  # two and a half poll intervals
            assert polls == [], "a finished run's page polls no more"


async def _runs_column(page: Page, index: int) -> list[str]:
    """The texts of column ``index`` of the runs table, one per run (no run is judged: one row each)."""
    cells = page.locator(f"#runs-table tbody tr td:nth-child({index})")
    return [text.strip() for text in await cells.all_text_contents()]


async def test_the_runs_list_reloads_while_a_run_is_recorded_and_stops_when_none_is(
    browser: Browser, tmp_path: Path, shots: Path
) -> None:
    db = tmp_path / "live.db"
    tasks = [Sketch(f"T{i}", f"task {i}") for i in range(1, 3)]
    async with open_store(db) as store:
        first = await open_run(store, label="first", agent="mine", model="m", tasks=tasks)
        await _episode(first, "T1")
        with serving(db, cwd=tmp_path) as url:
            page, polls = await _polling_page(browser)
            await page.goto(url)
            assert await page.locator("#live").is_visible()
            assert await _runs_column(page, 8) == ["recording"] and await _runs_column(page, 7) == ["1"]
            await _episode(first, "T2")  # appended while the list is open
            await expect(page.locator("#runs-table tbody tr td:nth-child(7)")).to_have_text(["2"], timeout=60_000)
            assert polls and all(p.endswith("/api/runs/live") for p in polls), polls

            second = await open_run(store, label="second", agent="mine", model="m", tasks=tasks)  # a run starts
            await expect(page.locator("#runs-table tbody tr")).to_have_count(2, timeout=60_000)
            await page.screenshot(path=shots / "runs-recording.png")
            await first.close()  # one run finished, the other still recording: the list keeps polling
            await expect(page.locator("#runs-table tbody tr td:nth-child(8)")).to_have_text(
                ["completed", "recording"], timeout=60_000
            )
            assert await page.locator("#live").is_visible()

            await _episode(second, "T1")
            await second.close()
            await expect(page.locator("#runs-table tbody tr td:nth-child(8)")).to_have_text(
                ["completed", "completed"], timeout=60_000
            )
            assert await _runs_column(page, 7) == ["2", "1"]
            assert await page.locator("#live").count() == 0
            polls.clear()
            await page.wait_for_timeout(5_000)  # two and a half poll intervals
            assert polls == [], "a list with no run recording polls no more"
