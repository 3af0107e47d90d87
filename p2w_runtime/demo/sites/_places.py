"""Cities the location-aware demo sites serve, with the ZIPs that get same-day delivery."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class City:
    name: str
    state: str
    zip: str
    neighborhoods: tuple[str, ...]


CITIES: tuple[City, ...] = (
    City("Austin", "TX", "78701", ("Downtown", "East Cesar Chavez", "South Congress", "Hyde Park", "Mueller")),
    City("Chicago", "IL", "60601", ("The Loop", "Logan Square", "Wicker Park", "Pilsen", "Andersonville")),
    City("Seattle", "WA", "98101", ("Capitol Hill", "Ballard", "Fremont", "Pioneer Square", "Columbia City")),
    City("Denver", "CO", "80202", ("LoDo", "RiNo", "Highlands", "Baker", "Cherry Creek")),
    City("Portland", "OR", "97201", ("Pearl District", "Alberta Arts", "Hawthorne", "Sellwood")),
    City("Boston", "MA", "02108", ("Back Bay", "North End", "South End", "Jamaica Plain")),
)
CITY_NAMES = tuple(c.name for c in CITIES)
SAME_DAY_ZIPS = frozenset(
    {"78701", "78702", "78704", "60601", "60614", "60622", "98101", "98102", "98103", "80202", "80205", "80211"}
)


def city(name: str) -> City | None:
    return next((c for c in CITIES if c.name.lower() == name.strip().lower()), None)
