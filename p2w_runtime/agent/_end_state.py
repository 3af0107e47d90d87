"""What the agent records of the browser as an episode ends: the final state offline checks read, and a curation's
product links, each fetched and kept."""

from __future__ import annotations

from p2w_rt.schemas import FinalState, PageCapture
from p2w_runtime.agent._environment import EpisodeTab
from p2w_runtime.browser import FinalStateData, answer_links
from p2w_runtime.domain import EpisodeWriter


def final_state(log: EpisodeWriter, final: FinalStateData, har: bytes | None) -> FinalState:
    """The ``final.state`` event of ``final`` and the HAR, its parts staged as blobs of ``log``."""
    return FinalState(
        url=final.url,
        title=final.title,
        dom_html=log.blob(final.dom_html),
        ax_tree=log.blob(final.ax_tree),
        screenshot=log.blob(final.screenshot) if final.screenshot else None,
        har=log.blob(har) if har else None,
        stylesheets=log.blob(final.stylesheets) if final.stylesheets else None,
    )


async def record_captures(log: EpisodeWriter, tab: EpisodeTab, answer: str) -> None:
    """A curation's product links, each fetched now and kept (status, final URL, DOM, screenshot)."""
    for index, page in enumerate(await tab.capture(answer_links(answer))):
        log.add(
            PageCapture(
                index=index,
                requested_url=page.requested_url,
                final_url=page.final_url,
                status=page.status,
                title=page.title,
                dom_html=log.blob(page.html) if page.html is not None else None,
                screenshot=log.blob(page.screenshot) if page.screenshot is not None else None,
                error=page.error,
            )
        )
