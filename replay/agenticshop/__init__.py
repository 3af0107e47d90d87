"""AgenticShop (Kim et al., WWW 2026) on recorded curation episodes: page attribution, extraction, checklist.

A plugin of the ``judge`` family (``AGENTICSHOP``; its settings: ``ShopSettings``, from ``--profiles``).
"""

from p2w_rt.replay.agenticshop._extract import extract_by_rules
from p2w_rt.replay.agenticshop._judges import SHOP_JUDGES, missing_target, target_brand
from p2w_rt.replay.agenticshop._pages import attribute, read_page
from p2w_rt.replay.agenticshop._plugin import AGENTICSHOP
from p2w_rt.replay.agenticshop._settings import ShopSettings
from p2w_rt.replay.agenticshop._tables import shop_tables

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
