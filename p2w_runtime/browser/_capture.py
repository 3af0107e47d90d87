"""Fetch the pages an answer links to, once, and keep them: AgenticShop curation is judged on these captures.

The reference fetches each product link at judging time, so its scores drift as shops change. Here the
status code, final URL, DOM and screenshot are taken at the end of the episode (or at import) and stored
as blobs; judging reads only them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from playwright.async_api import Error as PlaywrightError

from p2w_runtime.browser._errors import first_line
from p2w_runtime.browser._session import BrowserSession

CAPTURE_TIMEOUT_S = 20.0


@dataclass(frozen=True, slots=True)
class CapturedPage:
    requested_url: str
    final_url: str | None
    status: int | None
    title: str
    html: bytes | None
    screenshot: bytes | None
    error: str | None


async def capture_pages(
    session: BrowserSession, urls: Sequence[str], *, timeout_s: float = CAPTURE_TIMEOUT_S
) -> list[CapturedPage]:
    """Each URL in its own tab of one fresh context; a failed fetch is a capture with ``error``, never a raise."""
    browser = await session.new_context()
    out = []
    try:
        for url in urls:
            page = await browser.context.new_page()
            try:
                response = await page.goto(url, wait_until="domcontentloaded", timeout=timeout_s * 1000)
                out.append(
                    CapturedPage(
                        url,
                        page.url,
                        response.status if response is not None else None,
                        await page.title(),
                        (await page.content()).encode(),
                        await page.screenshot(type="png"),
                        None,
                    )
                )
            except PlaywrightError as exc:
                out.append(CapturedPage(url, None, None, "", None, None, first_line(exc)))
            finally:
                await page.close()
    finally:
        await browser.close()
    return out
