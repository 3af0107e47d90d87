"""Persona2Web's site lists, the settings its rubric and error classifiers read: the location-aware websites and
the user's site aliases, their options (``--location-site``, ``--site-alias``, ``--site-alias-file``) and the
part of a producer's config they make."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from p2w_rt.replay.derived import OptionError, PassSettings, PluginOption, ProducerConfig
from p2w_rt.replay.judges import LlmConfig
from p2w_rt.replay.matching import alias_target, site_aliases

PERSONA2WEB_LOCATION_SITES: tuple[str, ...] = ("amazon.com", "instacart.com", "resy.com", "opentable.com")
"""Persona2Web's location-aware websites."""
DEMO_LOCATION_SITES: tuple[str, ...] = (
    "threads.p2w.test",
    "basket.p2w.test",
    "tablefor.p2w.test",
    "stagepass.p2w.test",
)
"""The bundled demo sites flagged ``location_aware`` in their catalogue, named here as data so that replay never
imports the demo package (``tests/architecture/test_layering.py`` checks the two lists agree)."""
DEFAULT_LOCATION_SITES = (*PERSONA2WEB_LOCATION_SITES, *DEMO_LOCATION_SITES)


def default_location_sites() -> tuple[str, ...]:
    """Persona2Web's location-aware sites plus the bundled demo sites flagged ``location_aware``."""
    return DEFAULT_LOCATION_SITES


@dataclass(frozen=True)
class SiteSettings:
    """The site lists a user gives the rubric and the classifiers (``PassSettings.of(SiteSettings)``)."""

    location_sites: tuple[str, ...] = field(default_factory=default_location_sites)
    site_aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """The user's aliases (``replay.matching.site_aliases``), added to the built-in ``SITE_ALIASES``."""


SITE_OPTIONS = (
    PluginOption(
        "--location-site",
        "location_sites",
        "Another location-aware website (added to amazon, instacart, resy, opentable).",
        metavar="SITE",
        multiple=True,
    ),
    PluginOption(
        "--site-alias",
        "site_alias",
        "A site name of the task text and the domain agents visit for it (Google Flights.com="
        "google.com/travel/flights); added to the built-in aliases.",
        metavar="NAME=DOMAIN",
        multiple=True,
    ),
    PluginOption(
        "--site-alias-file",
        "site_alias_file",
        "A file of NAME=DOMAIN lines (# comments), added like --site-alias.",
        path="file",
    ),
)
"""The options of ``SiteSettings``, shared by the rubric judges and the classifiers."""


def site_settings(values: Mapping[str, Any]) -> SiteSettings:
    """``SiteSettings`` from ``SITE_OPTIONS``' values: the location sites and aliases added to the defaults."""
    added: dict[str, list[str]] = {}
    for name, target in _alias_pairs(values.get("site_alias", ()), values.get("site_alias_file")):
        added.setdefault(name, []).append(target)
    sites = (*default_location_sites(), *values.get("location_sites", ()))
    return SiteSettings(location_sites=sites, site_aliases=site_aliases(added))


def _alias_pairs(options: tuple[str, ...], file: Path | None) -> list[tuple[str, str]]:
    """The (name, target) pairs of ``--site-alias`` and ``--site-alias-file``; a bad one names the option or line."""
    given = [("--site-alias", "", text) for text in options]
    if file is not None:
        try:
            lines = file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise OptionError("--site-alias-file", f"{file}: cannot read ({exc})") from None
        given += [
            ("--site-alias-file", f"{file} line {n}: ", line.split("#")[0])
            for n, line in enumerate(lines, 1)
            if line.split("#")[0].strip()
        ]
    pairs = []
    for hint, place, text in given:
        name, sep, target = text.partition("=")
        try:
            if not sep or not name.strip():
                raise ValueError(f"expected NAME=DOMAIN, got {text.strip()!r}")
            pairs.append((name.strip(), alias_target(target)))
        except ValueError as exc:
            raise OptionError(hint, f"{place}{exc}") from None
    return pairs


class SiteConfig(ProducerConfig):
    """The site lists a rubric reads: location-aware sites, and the user's site aliases."""

    location_sites: tuple[str, ...]
    site_aliases: dict[str, tuple[str, ...]]


def site_fields(settings: PassSettings) -> dict[str, object]:
    """``SiteConfig``'s fields from the user's settings, sorted (the hash of old configs is kept)."""
    sites = settings.of(SiteSettings)
    return {
        "location_sites": sorted(sites.location_sites),
        "site_aliases": {k: sorted(v) for k, v in sorted(sites.site_aliases.items())},
    }


class LlmSiteConfig(LlmConfig, SiteConfig):
    """An LLM producer that reads the rubric's site lists too (its prompt names the expected site and location)."""
