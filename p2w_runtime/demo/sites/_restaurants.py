"""TableFor's restaurants: hand-placed ones the sample personas know, the rest seeded per city."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from p2w_runtime.demo.sites._places import CITIES
from p2w_runtime.demo.sites._text import seeded, tokens

DISHES = {
    "Thai": ("khao soi", "green curry", "pad see ew", "larb", "mango sticky rice"),
    "Italian": ("cacio e pepe", "wood-fired margherita", "osso buco", "tiramisu"),
    "Mexican": ("chilaquiles", "mole enchiladas", "al pastor tacos", "churros", "huevos rancheros"),
    "Japanese": ("omakase nigiri", "tonkotsu ramen", "karaage", "miso black cod"),
    "Indian": ("butter chicken", "saag paneer", "lamb biryani", "garlic naan"),
    "American": ("smash burger", "fried chicken", "mac and cheese", "apple pie"),
    "Vegetarian": ("cauliflower steak", "mushroom bourguignon", "grain bowls", "beet tartare"),
    "French": ("steak frites", "duck confit", "french onion soup", "creme brulee"),
    "Korean": ("bibimbap", "galbi", "kimchi pancake", "japchae"),
    "Mediterranean": ("mezze platter", "lamb kofta", "falafel", "baklava"),
    "Seafood": ("oysters", "lobster roll", "grilled branzino", "clam chowder"),
}
CUISINES = tuple(DISHES)
_NAMES = {
    "Thai": ("Golden Basil", "Siam Orchid", "Chili & Lime", "Jasmine Court"),
    "Italian": ("Trattoria Lucca", "Osteria Verde", "Nonna Rosa", "Forno Nero"),
    "Mexican": ("Cantina Azul", "El Comal", "Casa Maiz", "Mezcal & Masa"),
    "Japanese": ("Kaze Sushi", "Ramen Yokocho", "Izakaya Tora", "Hana Omakase"),
    "Indian": ("Saffron Room", "Tandoor House", "Masala Lane"),
    "American": ("The Copper Pot", "Union Grill", "Hearth & Vine", "Daybreak Diner"),
    "Vegetarian": ("Leaf & Ladle", "Garden Table", "Sprout Kitchen"),
    "French": ("Bistro Lune", "Le Petit Zinc", "Maison Claire"),
    "Korean": ("Seoul Fire", "Banchan House", "Gochu Grill"),
    "Mediterranean": ("Olive & Fig", "Aegean Kitchen", "Cedar Table"),
    "Seafood": ("Salt & Pier", "The Oyster Room", "Harbor Catch"),
}
DINNER = tuple(f"{h}:{m}" for h in range(17, 22) for m in ("00", "30"))
BRUNCH = tuple(f"{h}:{m}" for h in range(10, 14) for m in ("00", "30"))


@dataclass(frozen=True)
class Restaurant:
    id: str
    city: str
    name: str
    cuisine: str
    price_level: int
    rating: float
    review_count: int
    neighborhood: str
    max_party: int
    brunch: bool

    @property
    def dishes(self) -> tuple[str, ...]:
        return DISHES[self.cuisine]

    @property
    def times(self) -> tuple[str, ...]:
        return (BRUNCH if self.brunch else ()) + DINNER

    @property
    def words(self) -> set[str]:
        return tokens(" ".join((self.name, self.cuisine, self.neighborhood, self.city, *self.dishes)))


# (id, city, name, cuisine, price level, rating, reviews, neighborhood, max party, brunch)
_ANCHORS = (
    ("tf-a01", "Austin", "Lemongrass House", "Thai", 2, 4.7, 1312, "East Cesar Chavez", 8, False),
    ("tf-a02", "Austin", "Bangkok Alley", "Thai", 1, 4.3, 588, "Hyde Park", 6, False),
    ("tf-a03", "Austin", "Sala Rim Nam", "Thai", 3, 4.5, 402, "Downtown", 4, False),
    ("tf-a11", "Seattle", "Green Fern", "Vegetarian", 2, 4.6, 977, "Capitol Hill", 6, True),
    ("tf-a12", "Seattle", "Root & Stem", "Vegetarian", 4, 4.8, 654, "Ballard", 8, False),
    ("tf-a13", "Seattle", "Plantworks Cafe", "Vegetarian", 1, 4.2, 233, "Fremont", 4, True),
    ("tf-a21", "Denver", "La Paloma Cantina", "Mexican", 2, 4.6, 1450, "Highlands", 12, True),
    ("tf-a22", "Denver", "Casa Mireles", "Mexican", 3, 4.4, 521, "RiNo", 10, True),
    ("tf-a23", "Denver", "Taqueria El Sol", "Mexican", 1, 4.5, 860, "Baker", 4, False),
)


@cache
def restaurants() -> tuple[Restaurant, ...]:
    """Every restaurant in every city: anchors first, then twelve seeded ones per city."""
    out = [Restaurant(*row) for row in _ANCHORS]
    for city in CITIES:
        rng = seeded("tablefor", city.name)
        taken = {r.name for r in out if r.city == city.name}
        while sum(r.city == city.name for r in out) < 14:
            cuisine = rng.choice(CUISINES)
            name = rng.choice(_NAMES[cuisine])
            if name in taken:
                continue
            taken.add(name)
            out.append(
                Restaurant(
                    id=f"tf-{city.name[:3].lower()}{len(taken):02d}",
                    city=city.name,
                    name=name,
                    cuisine=cuisine,
                    price_level=rng.randint(1, 4),
                    rating=round(rng.triangular(3.4, 4.9, 4.3), 1),
                    review_count=max(12, int(rng.lognormvariate(5.2, 0.9))),
                    neighborhood=rng.choice(city.neighborhoods),
                    max_party=rng.choice((4, 6, 8, 10)),
                    brunch=rng.random() < 0.3,
                )
            )
    return tuple(out)


def restaurant(rid: str) -> Restaurant | None:
    return next((r for r in restaurants() if r.id == rid), None)


def find(
    city: str, cuisine: str = "", max_price: int | None = None, party: int | None = None, q: str = ""
) -> list[Restaurant]:
    """Restaurants in ``city`` (required) matching cuisine, price ceiling, party size and name words."""
    wanted = tokens(q)
    return [
        r
        for r in restaurants()
        if r.city.lower() == city.lower()
        and (not cuisine or r.cuisine.lower() == cuisine.lower())
        and (max_price is None or r.price_level <= max_price)
        and (party is None or party <= r.max_party)
        and wanted <= r.words
    ]


def available(r: Restaurant, date: str, time: str, party: int) -> bool:
    """Whether a slot is free: a stable pseudo-random 70% of slots, so the answer is the same every visit."""
    return party <= r.max_party and time in r.times and seeded(r.id, date, time, party).random() < 0.7


def slots_near(r: Restaurant, date: str, time: str, party: int, count: int = 4) -> list[str]:
    """The free times closest to the requested one."""

    def minutes(t: str) -> int:
        h, m = t.split(":")
        return int(h) * 60 + int(m)

    target = minutes(time) if ":" in time else 19 * 60
    free = [t for t in r.times if available(r, date, t, party)]
    return sorted(sorted(free, key=lambda t: abs(minutes(t) - target))[:count], key=minutes)
