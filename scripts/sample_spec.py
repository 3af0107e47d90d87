"""The shape of a sample persona: who they are, what they will ask, what behaviour gives their preferences away.

The personas themselves live in ``sample_personas/``, one module each; ``generate_sample.py`` reads both.
Preferences must show only implicitly (a "half-gallon" carton for **64 oz**, "waist 34, inseam 30" for
**34x30**), as Persona2Web requires; ``{a|b}`` in a template picks one variant. Each query set also names
the demo-site page whose results satisfy it (``target``) and, per preference, a history query a reasonable
agent would ask plus the phrases that reveal the answer (``cues``); the tests check both.
"""

from __future__ import annotations

from dataclasses import dataclass

from p2w_runtime.demo.sites.catalog import SITE_HOSTS

SEARCH, THREADS, BASKET, TABLEFOR, STAGEPASS = SITE_HOSTS


@dataclass(frozen=True)
class Pref:
    value: str
    query: str
    cues: tuple[str, ...]


@dataclass(frozen=True)
class QuerySet:
    set_id: str
    site: str
    level0: str
    level1: str
    level2: str
    prefs: tuple[Pref, ...]
    website_query: str
    target: str
    signals: tuple[tuple[str, str, str], ...]


@dataclass(frozen=True)
class Persona:
    first: str
    last: str
    city: str
    state: str
    zip: str
    sets: tuple[QuerySet, ...]
    interests: tuple[tuple[str, str, str], ...]

    @property
    def name(self) -> str:
        return f"{self.first}_{self.last}"


S = "web search"
V = "web visit"
P = "purchase"
B = "booking"
R = "review and rating"

GENERIC: tuple[tuple[str, str, str], ...] = (
    (S, "weather {city} {today|this weekend|tomorrow|next week}", SEARCH),
    (V, "{Weather.com 10-day forecast|Hourly radar} for {city}", "weather.com"),
    (
        V,
        "{NPR|Reuters} - {markets update|election coverage|climate report|science roundup|local news briefing}",
        "npr.org",
    ),
    (
        V,
        "The Verge - {long read on remote work|phone review|AI regulation explainer|city housing essay}",
        "theverge.com",
    ),
    (
        S,
        "how to {fix a leaky faucet|renew a passport|file taxes online|descale a kettle|clean a cast iron pan}",
        SEARCH,
    ),
    (
        S,
        "{cheap flights|train tickets|car rental} to {Boston|Portland|New York|San Diego} in {spring|the fall}",
        SEARCH,
    ),
    (P, "{Paper towels 12 ct|Dish soap|Laundry detergent|Trash bags|Sponges} from Basket", BASKET),
    (V, "Gmail - {inbox|calendar invite|receipt from the utility company}", "mail.google.com"),
    (V, "Bank of the West - {statement|bill pay|transfer}", "bankofthewest.com"),
    (
        B,
        "{Dentist cleaning|Haircut|Oil change|Annual physical} booked for a {Tuesday|Thursday|Saturday} "
        "{morning|afternoon}",
        "zocdoc.com",
    ),
    (
        R,
        "{Corner laundromat|Dry cleaner|Barber shop|Auto shop} on Yelp: {4|5}/5, {friendly staff|quick service}",
        "yelp.com",
    ),
    (S, "{podcast|audiobook} recommendations {history|true crime|science|productivity}", SEARCH),
    (V, "Spotify - {Discover Weekly|Daily Mix 2|podcast episode}", "spotify.com"),
    (
        V,
        "Wikipedia - {Great Pacific Garbage Patch|Roman Empire|Photosynthesis|Moon landing|Silk Road}",
        "wikipedia.org",
    ),
)
