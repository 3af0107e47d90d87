"""The settings a user gives a pass (``--model``, ``--temperature``, ``--location-site``, ``--site-alias``...).

Each producer keeps only the part it uses, as its typed config (``Producer.configure``); that config, not
these settings, is what its cache key hashes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import JsonValue

DEFAULT_JUDGE_MODEL = "gpt-5-mini"
PERSONA2WEB_LOCATION_SITES: tuple[str, ...] = ("amazon.com", "instacart.com", "resy.com", "opentable.com")
"""Persona2Web's location-aware websites."""
DEMO_LOCATION_SITES: tuple[str, ...] = (
    "threads.p2w.test",
    "basket.p2w.test",
    "tablefor.p2w.test",
    "stagepass.p2w.test",
)
"""The bundled demo sites flagged ``location_aware`` in their catalogue, named here as data so that replay never
imports the demo package (``tests/test_layering.py`` checks the two lists agree)."""
DEFAULT_LOCATION_SITES = (*PERSONA2WEB_LOCATION_SITES, *DEMO_LOCATION_SITES)


def default_location_sites() -> tuple[str, ...]:
    """Persona2Web's location-aware sites plus the bundled demo sites flagged ``location_aware``."""
    return DEFAULT_LOCATION_SITES


@dataclass(frozen=True)
class JudgeSettings:
    """Everything a user can set for a pass; each producer keeps the part it uses."""

    model: str = DEFAULT_JUDGE_MODEL
    temperature: float | None = None
    params: Mapping[str, JsonValue] = field(default_factory=dict)
    location_sites: tuple[str, ...] = field(default_factory=default_location_sites)
    site_aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """The user's aliases (``replay.matching.site_aliases``), added to the built-in ``SITE_ALIASES``."""
    webarena_configs: str | None = None
    site_urls: Mapping[str, str] = field(default_factory=dict)
    agenticshop_profiles: str | None = None
    """AgenticShop user profiles (file or folder) for the checklist and hit-ratio judges."""
    sample: int = 0
    """Which of ``replay --samples N`` judgments this is: LLM producers hash it, so each sample is its own call."""

    def llm_params(self) -> dict[str, JsonValue]:
        params = dict(self.params)
        if self.temperature is not None:
            params["temperature"] = self.temperature
        return params
