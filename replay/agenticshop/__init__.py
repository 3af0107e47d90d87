"""AgenticShop (Kim et al., WWW 2026) on recorded curation episodes: page attribution, extraction, checklist.

A plugin of the ``judge`` family (``AGENTICSHOP``; its settings: ``ShopSettings``, from ``--profiles``).
"""

from replay.agenticshop._extract import extract_by_rules
from replay.agenticshop._judges import SHOP_JUDGES, missing_target, target_brand
from replay.agenticshop._pages import attribute, read_page
from replay.agenticshop._plugin import AGENTICSHOP
from replay.agenticshop._settings import ShopSettings
from replay.agenticshop._tables import shop_tables

__all__ = [
    "AGENTICSHOP",
    "SHOP_JUDGES",
    "ShopSettings",
    "attribute",
    "extract_by_rules",
    "missing_target",
    "target_brand",
    "read_page",
    "shop_tables",
]
