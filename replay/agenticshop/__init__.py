"""AgenticShop (Kim et al., WWW 2026) on recorded curation episodes: page attribution, extraction, checklist.

The tables (``replay.agenticshop._tables``) are imported from there: they read judgments through
``replay.judging``, which imports the judge registry, which imports the judges of this package.
"""

import replay.judges  # noqa: F401 - first: the judge registry imports ._judges, which needs replay.judges._base
from replay.agenticshop._extract import ProductInfo, extract_by_rules
from replay.agenticshop._judges import (
    SHOP_JUDGES,
    AttributionJudge,
    ChecklistJudge,
    ExtractJudge,
    HitRatioJudge,
    linked_pages,
    missing_target,
)
from replay.agenticshop._pages import Page, attribute, read_page

__all__ = [
    "SHOP_JUDGES",
    "AttributionJudge",
    "ChecklistJudge",
    "ExtractJudge",
    "HitRatioJudge",
    "Page",
    "ProductInfo",
    "attribute",
    "extract_by_rules",
    "linked_pages",
    "missing_target",
    "read_page",
]
