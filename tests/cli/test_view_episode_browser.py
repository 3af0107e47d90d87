"""The episode page in headless Chromium: a permalink to an LLM call on another page lands there with the call open,
the step box pages, the compare page's divergent step opens the prompt diff, and a label form submitted in the
browser is recorded. Each page is screenshotted into the test's output folder (or ``$P2W_VIEW_SHOTS``)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page

from tests.helpers.view_support import LONG_TASK, event_count, serving

pytestmark = pytest.mark.slow


async def _in_view(page: Page, selector: str) -> bool:
    return await page.eval_on_selector(
        selector, "el => { const r = el.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; }"
    )


async def test_an_llm_call_permalink_on_another_page_opens_that_page_at_the_call(
    browser: Browser, long_url: str, shots: Path
) -> None:
    page = await browser.new_page(viewport={"width": 1400, "height": 900})
    await page.goto(long_url + f"run/long/episode/{LONG_TASK}?step=150#llm-150-1")
    await page.wait_for_url(re.compile(r"\?page=2#llm-150-1$"))
    assert await page.eval_on_selector("#llm-150-1", "a => a.closest('details').open"), "the call it names is open"
    assert await _in_view(page, "#llm-150-1") and await page.is_visible("#llm-150-1")
    assert await page.get_attribute("#llm-150-1", "href") == f"/run/01long-run/episode/{LONG_TASK}?step=150#llm-150-1"
    await page.screenshot(path=shots / "episode-permalink.png")
    await page.fill("nav.pager input[name=step]", "230")
    await page.click("nav.pager button")
    await page.wait_for_url(re.compile(r"\?page=3$"))
    assert await page.is_visible("#step-230") and not await page.is_visible("#step-150")
    await page.click('nav.pager a[rel="prev"]')
    await page.wait_for_url(re.compile(r"\?page=2$"))
    assert await page.locator("section.step").count() == 100


async def test_the_compare_pages_divergent_step_opens_the_prompt_diff(
    browser: Browser, demo: Path, shots: Path
) -> None:
    page = await browser.new_page(viewport={"width": 1400, "height": 900})
    with serving(demo, cwd=demo.parent) as url:
        await page.goto(url + "compare?a=earlier&b=later")
        row = page.locator("tr.task-row", has_text="Tomas_Reyes_B1")
        await row.locator('a[href*="against=later"]').click()
        await page.wait_for_url(re.compile(r"Tomas_Reyes_B1\?against=later#prompt-diff$"))
        assert await _in_view(page, "#prompt-diff h2")
        assert await page.locator("#prompt-diff pre.diff span.dadd").count() > 5, "the generator call only in later"
        await page.screenshot(path=shots / "episode-prompt-diff.png")
        await page.click("#prompt-diff p a")
        assert await page.evaluate("location.hash") == "#step-1"


async def test_a_label_form_submitted_in_the_browser_is_recorded(
    browser: Browser, demo: Path, tmp_path: Path, shots: Path
) -> None:
    db = tmp_path / "labels.db"
    shutil.copy(demo, db)
    page = await browser.new_page(viewport={"width": 1400, "height": 900})
    with serving(db, "--annotator", "ana", cwd=tmp_path) as url:
        await page.goto(url + "run/earlier/episode/Lena_Fischer_B1")
        before = event_count(db)
        await page.select_option("select[name=success]", "0.0")
        await page.select_option("select[name=p_web]", "1.0")
        await page.fill("input[name=p_pref]", "0.5")
        await page.check("input[value=history_utilization_failure]")
        await page.click(".label-form button[type=submit]")
        await page.wait_for_selector(".label-form .saved")
        assert "labelled=written" in page.url
        card = page.locator(".judgment", has=page.locator("h3", has_text="human:ana"))
        assert await card.count() == 1
        assert "success no" in " ".join((await card.locator(".metrics-line").text_content() or "").split())
        seen = await card.locator(".error-labels-seen").text_content() or ""
        assert "history_utilization_failure" in seen and "of 11 looked for" in seen
        assert await card.locator("table.points tr").count() == 0, "no rows of 0.0/1.0 for the error labels"
        await page.screenshot(path=shots / "episode-labels.png")
        after = event_count(db)

        await page.click("a.judges-link")
        await page.wait_for_url("**/judges/Lena_Fischer_B1")
        headers = [h.strip() for h in await page.locator("#judges thead th.rater").all_text_contents()]
        assert [h.split()[0] for h in headers] == ["rubric-rules", "human:ana", "classify:rules"], headers
        p_web = page.locator("#judges tbody tr", has=page.locator("td.mono", has_text=re.compile("^p_web$")))
        rules, ana = [x.strip() for x in await p_web.locator("td.judge-cell b").all_text_contents()]
        assert ana == "1.000" and await p_web.get_attribute("class") == ("agree" if rules == ana else "disagree")
        success = page.locator("#judges tbody tr", has=page.locator("td.mono", has_text=re.compile("^success$")))
        verdicts = [x.strip() for x in await success.locator("td.judge-cell b").all_text_contents()]
        assert verdicts[1] == "no" and await success.get_attribute("class") == (
            "agree" if verdicts[0] == "no" else "disagree"
        )
        assert await page.locator("#judges tbody tr.disagree").count() > 0
        label = page.locator("#judges tbody tr", has=page.locator("td.mono", has_text="history_utilization_failure"))
        cells = [" ".join(c.split()) for c in await label.locator("td.judge-cell").all_text_contents()]
        assert cells[0] == "–" and cells[1].startswith("seen") and cells[2].split()[0] in ("seen", "not"), cells
        rows = await page.locator("#judges tbody tr").count()
        await page.check("#only-disagree")
        shown = await page.locator("#judges tbody tr:visible").count()
        assert 0 < shown < rows and shown == await page.locator("#judges tbody tr.disagree").count()
        evidence = page.locator("#judges a.ev-link").first
        href = await evidence.get_attribute("href") or ""
        assert re.search(r"/run/[^/]+/episode/Lena_Fischer_B1#ev-", href), href
        await page.uncheck("#only-disagree")
        await page.screenshot(path=shots / "episode-judges.png", full_page=True)
        await evidence.click()
        await page.wait_for_url("**/episode/Lena_Fischer_B1#ev-*")
        assert await page.locator(".highlight").count() > 0, "the evidence link lands on its event"
    assert after == before + 2, "one judgment and the seal that covers it"
    assert event_count(db) == after, "the side-by-side view reads only"
