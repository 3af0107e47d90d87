"""Fetch the pages an answer links to, once, and keep them: AgenticShop curation is judged on these captures.

The reference fetches each product link at judging time, so its scores drift as shops change. Here the
status code, final URL, DOM and screenshot are taken at the end of the episode (or at import) and stored
as blobs; judging reads only them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from playwright.async_api import BrowserContext
from playwright.async_api import Error as PlaywrightError

from p2w_runtime.browser._errors import first_line

CAPTURE_TIMEOUT_S = 20.0
LINKS_CAPTURED = 3
"""AgenticShop judges the first three curated products (``search_results[:3]``); only those are fetched."""
URL = re.compile(r"https?://[^\s<>()\[\]\"'`,]+")


def answer_links(answer: str, limit: int = LINKS_CAPTURED) -> list[str]:
    """The product links of an answer: the reference's ``{"search_results": [{"product_url"}]}``, else URLs in order."""
    urls: list[str] = []
    try:
        data = json.loads(answer)
    except (json.JSONDecodeError, TypeError):
        data = None
    items = data.get("search_results") if isinstance(data, dict) else data
    if isinstance(items, list):
        urls = [i["product_url"] for i in items if isinstance(i, dict) and isinstance(i.get("product_url"), str)]
    if not urls:
        urls = [u.rstrip(".;:!?") for u in URL.findall(answer or "")]
    return list(dict.fromkeys(urls))[:limit]


@dataclass(frozen=True, slots=True)
class CapturedPage:
    requested_url: str
    final_url: str | None
    status: int | None
    title: str
    html: bytes | None
    screenshot: bytes | None
    error: str | None


async def capture_in(
    context: BrowserContext, urls: Sequence[str], *, timeout_s: float = CAPTURE_TIMEOUT_S
) -> list[CapturedPage]:
    """Each URL in a new tab of ``context`` (an episode's, at its end); a failed fetch is a capture with
    ``error``, never a raise."""
    out = []
    for url in urls:
        page = await context.new_page()
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
    return out
