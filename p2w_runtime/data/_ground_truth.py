"""Ground truth from a level-0 (fully explicit) Persona2Web query.

The published level-0 texts follow one convention: ``At <site>, ... **pref** ... (City, ST ZIP)``.
The texts are hand-written and messy (alternatives, typos such as ``coursera.org.com``,
a location repeated inside a bold span), so the parser keeps what is written and only
splits what the convention marks.
"""

from __future__ import annotations

import re

from p2w_rt.schemas import GroundTruth, Location
from p2w_runtime.data._errors import DataError

_SITE = re.compile(r"^\s*At\s+(?P<site>[^,\n]+?)\s*,")
_ALTERNATIVES = re.compile(r"\s+or\s+", re.IGNORECASE)
_BOLD = re.compile(r"\*\*(.+?)\*\*", re.DOTALL)
_LOCATION = re.compile(
    r"\((?P<raw>(?P<city>[^(),]+?),\s*(?P<state>[^(),\d]+?)(?:\s+(?P<zip>\d{5}(?:-\d{4})?))?)\)\s*\.?\s*$"
)
_STATE_CODE = re.compile(r"^[A-Z]{2}$")


def parse_location(text: str) -> Location | None:
    """A trailing ``(City, ST ZIP)``; without a ZIP only a two-letter state counts (else any aside would match)."""
    match = _LOCATION.search(text)
    if match is None:
        return None
    state, zip_code = match["state"].strip(), match["zip"]
    if zip_code is None and not _STATE_CODE.match(state):
        return None
    return Location(city=match["city"].strip(), state=state, zip=zip_code, raw=match["raw"].strip())


def ground_truth(level0_intent: str) -> GroundTruth:
    """Website(s), bold preferences in order, and location of a level-0 intent (without ``Query: ``)."""
    site = _SITE.match(level0_intent)
    if site is None:
        raise DataError(f"level-0 intent does not start with 'At <site>,': {level0_intent[:80]!r}")
    website = site["site"]
    preferences = [span.strip() for span in _BOLD.findall(level0_intent) if span.strip()]
    return GroundTruth(
        website=website,
        websites=[alt.strip() for alt in _ALTERNATIVES.split(website) if alt.strip()],
        preferences=preferences,
        location=parse_location(level0_intent),
    )
