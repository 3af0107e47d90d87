"""The state a recorded episode ended in, for offline checks: read off the agent's page or given as values, its
HAR scrubbed of cookies and credentials."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from playwright.async_api import Page

from p2w_rt.schemas import FinalState
from p2w_runtime.browser import scrub_har
from p2w_runtime.domain import EpisodeWriter
from p2w_runtime.errors import UserError
from p2w_runtime.recording._page import final_of

Har = bytes | Callable[[], Awaitable[bytes | None]] | None
"""A HAR's bytes, or a coroutine function giving them once the page was read."""


async def final_state(
    writer: EpisodeWriter,
    page: Page | None,
    *,
    url: str | None,
    title: str,
    dom_html: str | bytes | None,
    ax_tree: str | None,
    screenshot: bytes | None,
    har: Har,
) -> FinalState:
    """``EpisodeRecorder.final_state``'s event, its blobs staged through ``writer``."""
    stylesheets: bytes | None = None
    if page is not None:
        final = await final_of(page)
        url, title, dom_html, screenshot = final.url, final.title, final.dom_html, final.screenshot or None
        ax_tree, stylesheets = final.ax_tree.decode(), final.stylesheets or None
    if url is None:
        raise UserError(f"episode {writer.stream}: a final state needs a page or a url")
    if callable(har):
        har = await har()
    try:
        har = scrub_har(har) if har else None
    except ValueError as exc:
        raise UserError(f"episode {writer.stream}: the final state's HAR is not a HAR file: {exc}") from None
    dom = dom_html.encode() if isinstance(dom_html, str) else dom_html
    blob = writer.blob
    return FinalState(
        url=url,
        title=title,
        dom_html=blob(dom) if dom is not None else None,
        ax_tree=blob(ax_tree.encode()) if ax_tree is not None else None,
        screenshot=blob(screenshot) if screenshot else None,
        har=blob(har) if har else None,
        stylesheets=blob(stylesheets) if stylesheets else None,
    )
