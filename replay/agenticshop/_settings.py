"""What a user gives the AgenticShop judges: the user profiles (checklists, target brands), and their option."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from p2w_rt.replay.derived import PluginOption


@dataclass(frozen=True)
class ShopSettings:
    """``PassSettings.of(ShopSettings)``: the AgenticShop judges' part of the user's settings."""

    profiles: str | None = None
    """AgenticShop user profiles (file or folder) for the checklist and hit-ratio judges."""


OPTIONS = (
    PluginOption(
        "--profiles",
        "profiles",
        "AgenticShop user profiles (a *_user_profile.json or a folder) for agenticshop-checklist and hit-ratio.",
        path="any",
    ),
)


def shop_settings(values: Mapping[str, Any]) -> ShopSettings:
    profiles: Path | None = values.get("profiles")
    return ShopSettings(profiles=str(profiles) if profiles else None)
