"""StagePass's events: hand-placed ones the sample personas know, the rest seeded per city.

Dates are offsets from the day the sites start, so an event is always upcoming.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import cache

from p2w_runtime.demo.sites._places import CITIES
from p2w_runtime.demo.sites._text import seeded, tokens

GENRES = ("jazz", "rock", "indie", "comedy", "classical", "country", "hip-hop")
_PERFORMERS = {
    "jazz": ("Brassline Big Band", "June Alvarez Sextet", "The Night Owls Trio", "Sol Mendel Quartet"),
    "rock": ("Static Harbor", "The Redlines", "Copper Wolves", "Neon Parish"),
    "indie": ("Paper Lanterns", "Wren & the Tides", "Lowlight Choir", "Soft Arcade"),
    "comedy": ("Dev Kapoor Live", "Marla Quinn: Unfiltered", "Laugh Riot Showcase", "Benny Ortiz: Late Set"),
    "classical": ("City Chamber Orchestra", "Aurora String Quartet", "Piano Nights: Chopin"),
    "country": ("Dusty Pines", "Callie Boone", "The Gravel Road Band"),
    "hip-hop": ("MC Tempest", "Kilo & the Verse", "Northside Cypher"),
}
_VENUES = ("Union Hall", "The Foundry", "Riverside Theater", "The Blue Room", "Civic Auditorium", "Warehouse 9")
_TIERS = {
    "comedy": ("General Admission", "Front Tables"),
    "classical": ("Balcony", "Orchestra", "Box"),
}
_DEFAULT_TIERS = ("General Admission", "Reserved Seating", "VIP")


@dataclass(frozen=True)
class Event:
    id: str
    city: str
    title: str
    genre: str
    venue: str
    day_offset: int
    time: str
    tiers: tuple[tuple[str, float], ...]

    def date(self, today: dt.date) -> dt.date:
        return today + dt.timedelta(days=self.day_offset)

    @property
    def min_price(self) -> float:
        return min(price for _, price in self.tiers)

    @property
    def words(self) -> set[str]:
        return tokens(f"{self.title} {self.genre} {self.venue} {self.city}")


# (id, city, title, genre, venue, day offset, time, tiers)
_ANCHORS = (
    (
        "sp-a01",
        "Chicago",
        "The Marlowe Quartet",
        "jazz",
        "Velvet Lantern",
        9,
        "20:00",
        (("General Admission", 45.0), ("Table Seating", 75.0)),
    ),
    (
        "sp-a02",
        "Chicago",
        "Nia Okoro Trio",
        "jazz",
        "Drake Street Jazz Room",
        16,
        "19:30",
        (("General Admission", 35.0), ("Premium", 95.0)),
    ),
    (
        "sp-a03",
        "Chicago",
        "Brassline Big Band: Ellington Night",
        "jazz",
        "Symphony Center Annex",
        12,
        "20:00",
        (("Balcony", 110.0), ("Orchestra", 160.0)),
    ),
    (
        "sp-a11",
        "Denver",
        "Rita Vance: Overshare Tour",
        "comedy",
        "The Laugh Vault",
        6,
        "21:00",
        (("General Admission", 35.0), ("Front Tables", 60.0)),
    ),
    (
        "sp-a12",
        "Denver",
        "Tuesday Open Mic Marathon",
        "comedy",
        "Basement Stage",
        4,
        "19:00",
        (("General Admission", 15.0),),
    ),
    (
        "sp-a13",
        "Denver",
        "Dev Kapoor Live",
        "comedy",
        "Paramount Hall",
        20,
        "20:00",
        (("Balcony", 55.0), ("Orchestra", 89.0)),
    ),
)


@cache
def events() -> tuple[Event, ...]:
    """Every event in every city: anchors first, then ten seeded ones per city."""
    out = [Event(*row) for row in _ANCHORS]
    for city in CITIES:
        rng = seeded("stagepass", city.name)
        for n in range(10):
            genre = rng.choice(GENRES)
            tiers = _TIERS.get(genre, _DEFAULT_TIERS)
            base = rng.uniform(18, 90)
            out.append(
                Event(
                    id=f"sp-{city.name[:3].lower()}{n + 1:02d}",
                    city=city.name,
                    title=rng.choice(_PERFORMERS[genre]),
                    genre=genre,
                    venue=rng.choice(_VENUES),
                    day_offset=rng.randint(2, 75),
                    time=rng.choice(("19:00", "19:30", "20:00", "21:00")),
                    tiers=tuple((name, float(round(base * (1 + 0.8 * i)))) for i, name in enumerate(tiers)),
                )
            )
    return tuple(out)


def event(eid: str) -> Event | None:
    return next((e for e in events() if e.id == eid), None)


def find(city: str = "", genre: str = "", max_price: float | None = None, q: str = "") -> list[Event]:
    """Events matching the filters, soonest first; ``max_price`` applies to the cheapest ticket tier."""
    wanted = tokens(q)
    hits = [
        e
        for e in events()
        if (not city or e.city.lower() == city.lower())
        and (not genre or e.genre == genre.lower())
        and (max_price is None or e.min_price <= max_price)
        and wanted <= e.words
    ]
    return sorted(hits, key=lambda e: (e.day_offset, e.time, e.id))
