"""AgenticShop (Kim et al., WWW 2026) on recorded curation episodes: page attribution, extraction, checklist.

A plugin of the ``judge`` family (``AGENTICSHOP``; its settings: ``ShopSettings``, from ``--profiles``).
"""

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
from replay.agenticshop._plugin import AGENTICSHOP
from replay.agenticshop._settings import ShopSettings
from replay.agenticshop._tables import shop_tables

__all__ = [
    "AGENTICSHOP",
    "SHOP_JUDGES",
    "AttributionJudge",
    "ChecklistJudge",
    "ExtractJudge",
    "HitRatioJudge",
    "Page",
    "ProductInfo",
    "ShopSettings",
    "attribute",
    "extract_by_rules",
    "linked_pages",
    "missing_target",
    "read_page",
    "shop_tables",
]
