"""The curated links of an answer as AgenticShop's judges read them: each capture's page, read and attributed, and
the product information on it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from p2w_rt.replay.agenticshop._extract import ProductInfo, extract_by_rules, extraction_messages
from p2w_rt.replay.agenticshop._ids import NO_PRODUCTS
from p2w_rt.replay.agenticshop._pages import Attribution, Page, attribute, read_page
from p2w_rt.replay.judges import JudgeContext, JudgeError, LlmConfig
from p2w_runtime.domain.trajectory import CaptureRecord, Trajectory

_LINK = re.compile(r"https?://")
"""A link in an answer: recorded and imported curations capture every one they judge."""


@dataclass(frozen=True, slots=True)
class Linked:
    """One curated link as recorded: its capture, the page read from it, and its attribution."""

    capture: CaptureRecord
    page: Page | None
    attribution: Attribution
    reason: str

    @property
    def url(self) -> str:
        return self.capture.final_url or self.capture.requested_url


async def linked_pages(t: Trajectory, ctx: JudgeContext, judged: int) -> list[Linked]:
    """The first ``judged`` captured links of the answer, read and attributed. An answer linking no page is an empty
    curation (``NO_PRODUCTS``), not a 0: the reference leaves such a user out."""
    if not t.captures:
        answer = t.end.answer if t.end else None
        if not _LINK.search(answer or ""):
            raise JudgeError(NO_PRODUCTS)
        raise JudgeError(f"episode {t.stream} has no page captures: it was not recorded or imported as a curation")
    out = []
    for c in sorted(t.captures, key=lambda c: c.index)[:judged]:
        page = None
        if c.dom_html is not None:
            page = read_page((await ctx.get_blob(c.dom_html)).decode("utf-8", errors="replace"))
        kind, reason = attribute(c.status, c.final_url or c.requested_url, page, c.error)
        out.append(Linked(c, page, kind, reason))
    return out


def shares(pages: list[Linked]) -> dict[str, float]:
    """The share of the links of each attribution."""
    n = len(pages) or 1
    return {k: round(sum(p.attribution == k for p in pages) / n, 6) for k in ("valid", "invalid", "irrelevant")}


async def extract(p: Linked, ctx: JudgeContext, config: LlmConfig) -> ProductInfo:
    """Rules when the page has one schema.org Product, otherwise one LLM call over its text."""
    if p.page is None:
        return ProductInfo(source="no page")
    info = extract_by_rules(p.page)
    if info is not None:
        return info
    messages = extraction_messages(p.url, p.page)
    answer = await ctx.need_llm().complete_json("judge", messages, ProductInfo, params=config.params)
    return answer.model_copy(update={"source": config.model})
