"""What a user gives the WebArena judge: the task configs and the sites' base URLs, and the options that set them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from p2w_rt.replay.derived import OptionError, PluginOption


@dataclass(frozen=True)
class WebArenaSettings:
    """``PassSettings.of(WebArenaSettings)``: the WebArena judge's part of the user's settings."""

    configs: str | None = None
    """WebArena task configs: ``test.raw.json``, one config, or a folder."""
    site_urls: Mapping[str, str] = field(default_factory=dict)
    """Base URL per site placeholder (``gitlab``), over the environment's (``GITLAB``...)."""


OPTIONS = (
    PluginOption(
        "--webarena-config",
        "webarena_config",
        "WebArena task configs (test.raw.json, one config, or a folder) for --judge webarena.",
        path="any",
    ),
    PluginOption(
        "--site-url",
        "site_urls",
        "Base URL of a WebArena site placeholder (gitlab=http://...); default: env GITLAB, SHOPPING...",
        metavar="NAME=URL",
        multiple=True,
    ),
)


def webarena_settings(values: Mapping[str, Any]) -> WebArenaSettings:
    """``WebArenaSettings`` from ``OPTIONS``' values; a ``--site-url`` that is not NAME=URL is an ``OptionError``."""
    configs: Path | None = values.get("webarena_config")
    urls: dict[str, str] = {}
    for pair in values.get("site_urls", ()):
        key, sep, value = pair.partition("=")
        if not sep or not key or not value:
            raise OptionError("--site-url", f"expected NAME=URL, got {pair!r}")
        urls[key.strip().lower()] = value.strip()
    return WebArenaSettings(configs=str(configs) if configs else None, site_urls=urls)
