"""AgenticShop (Kim et al., WWW 2026) on recorded curation episodes: page attribution, extraction, checklist.

A plugin of the ``judge`` family (``AGENTICSHOP``; its settings: ``ShopSettings``, from ``--profiles``) and of
``metrics`` (``TABLES``: its tables, made from current judgments without loading a judge).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2w_runtime.lazy import lazy_names

if TYPE_CHECKING:
    from p2w_rt.replay.agenticshop._extract import extract_by_rules
    from p2w_rt.replay.agenticshop._judges import SHOP_JUDGES
    from p2w_rt.replay.agenticshop._pages import attribute, read_page
    from p2w_rt.replay.agenticshop._plugin import AGENTICSHOP
    from p2w_rt.replay.agenticshop._settings import ShopSettings
    from p2w_rt.replay.agenticshop._tables import TABLES
    from p2w_rt.replay.agenticshop._target import missing_target, target_brand

__all__ = [
    "AGENTICSHOP",
    "SHOP_JUDGES",
    "TABLES",
    "ShopSettings",
    "attribute",
    "extract_by_rules",
    "missing_target",
    "target_brand",
    "read_page",
]

_MODULES = {
    "extract_by_rules": "_extract",
    "SHOP_JUDGES": "_judges",
    "missing_target": "_target",
    "target_brand": "_target",
    "attribute": "_pages",
    "read_page": "_pages",
    "AGENTICSHOP": "_plugin",
    "ShopSettings": "_settings",
    "TABLES": "_tables",
}
"""Where each exported name lives; they load on first use (``metrics`` reads its tables and loads no judge)."""

__getattr__ = lazy_names(__name__, _MODULES, globals())
