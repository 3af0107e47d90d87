"""Shop catalogs: a seeded random assortment per category plus hand-placed items the sample tasks need.

Randomness only fills the shelves; the items a sample persona bought or a sample task must find
are written out in ``_product_data`` so changing a seed can never make a task unsolvable.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache

from p2w_runtime.demo.sites._product_data import ANCHORS, CATEGORIES, CategorySpec
from p2w_runtime.demo.sites._text import seeded, tokens

SORTS = {
    "relevance": "Best match",
    "price_asc": "Price: low to high",
    "price_desc": "Price: high to low",
    "rating": "Customer rating",
    "reviews": "Most reviewed",
}
RATING_STEPS = (3.0, 3.5, 4.0, 4.5)


@dataclass(frozen=True)
class Product:
    id: str
    host: str
    category: str
    name: str
    brand: str
    price: float
    rating: float
    review_count: int
    sizes: tuple[str, ...]
    tags: tuple[str, ...]
    color: str = ""
    words: frozenset[str] = field(default=frozenset(), compare=False)


def _with_words(product: Product, spec: CategorySpec) -> Product:
    text = " ".join((product.name, product.brand, product.color, spec.label, *product.tags))
    return Product(**{**product.__dict__, "words": frozenset(tokens(text))})


def _price(rng: random.Random, low: float, high: float) -> float:
    value = rng.uniform(low, high)
    cents = rng.choice((0.99, 0.49, 0.0, 0.79))
    return round(max(int(value) + cents, low), 2)


def _generate(spec: CategorySpec) -> list[Product]:
    rng = seeded(spec.host, spec.slug)
    made: list[Product] = []
    names = {anchor["name"] for anchor in ANCHORS}
    while len(made) < spec.count:
        brand, (noun, noun_tags), (style, style_tags) = (
            rng.choice(spec.brands),
            rng.choice(spec.nouns),
            rng.choice(spec.styles),
        )
        gender = rng.choice(spec.genders)
        name = " ".join(part for part in (brand, gender, style, noun) if part)
        if name in names:
            continue
        names.add(name)
        if spec.size_mode == "one":
            sizes: tuple[str, ...] = (rng.choice(spec.sizes),)
        elif spec.size_mode == "some":
            sizes = tuple(s for s in spec.sizes if rng.random() < 0.7) or (rng.choice(spec.sizes),)
        else:
            sizes = ()
        low, mode, high = spec.rating
        product = Product(
            id=f"{spec.prefix}{len(made) + 1:03d}",
            host=spec.host,
            category=spec.slug,
            name=name,
            brand=brand,
            price=_price(rng, *spec.price),
            rating=round(rng.triangular(low, high, mode), 1),
            review_count=max(2, int(rng.lognormvariate(4.2, 1.3))),
            sizes=sizes,
            tags=tuple(dict.fromkeys((*noun_tags, *style_tags))),
            color=rng.choice(spec.colors) if spec.colors else "",
        )
        made.append(_with_words(product, spec))
    return made


@cache
def catalog(host: str) -> tuple[Product, ...]:
    """Every product of the shop at ``host``, anchors first; the same on every call and every machine."""
    specs = {spec.slug: spec for spec in CATEGORIES if spec.host == host}
    anchors = [_with_words(Product(host=host, **a), specs[a["category"]]) for a in ANCHORS if a["category"] in specs]
    generated = [p for spec in specs.values() for p in _generate(spec)]
    return tuple(anchors + generated)


def categories(host: str) -> list[CategorySpec]:
    return [spec for spec in CATEGORIES if spec.host == host]


def product(host: str, product_id: str) -> Product | None:
    return next((p for p in catalog(host) if p.id == product_id), None)


@dataclass(frozen=True)
class ProductQuery:
    """The shop's search form; every field is a GET parameter so the URL alone reproduces the result page."""

    q: str = ""
    category: str = ""
    size: str = ""
    min_rating: float | None = None
    max_price: float | None = None
    sort: str = "relevance"

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> ProductQuery:
        def number(name: str) -> float | None:
            try:
                return float(params.get(name, "")) if params.get(name, "").strip() else None
            except ValueError:
                return None

        sort = params.get("sort", "relevance")
        return cls(
            q=params.get("q", "").strip(),
            category=params.get("category", "").strip(),
            size=params.get("size", "").strip(),
            min_rating=number("min_rating"),
            max_price=number("max_price"),
            sort=sort if sort in SORTS else "relevance",
        )


def search(host: str, query: ProductQuery) -> list[Product]:
    """Products matching every word of ``q`` and every filter, in the requested order."""
    wanted = tokens(query.q)
    hits = [
        p
        for p in catalog(host)
        if wanted <= p.words
        and (not query.category or p.category == query.category)
        and (not query.size or query.size in p.sizes)
        and (query.min_rating is None or p.rating >= query.min_rating)
        and (query.max_price is None or p.price <= query.max_price)
    ]
    keys = {
        "price_asc": lambda p: (p.price, p.id),
        "price_desc": lambda p: (-p.price, p.id),
        "rating": lambda p: (-p.rating, -p.review_count, p.id),
        "reviews": lambda p: (-p.review_count, p.id),
    }
    if query.sort in keys:
        hits.sort(key=keys[query.sort])
    return hits


_APPAREL = {spec.slug: spec.size_mode == "some" for spec in CATEGORIES}
_REVIEWERS = ("Sam K.", "Avery L.", "Jordan P.", "Chris M.", "Dana R.", "Nico B.", "Robin T.", "Kai W.", "Lee H.")
_PRAISE = ("Exactly as described.", "Great quality for the price.", "Would buy again.", "Arrived quickly.")
_FIT = ("Fits true to size.", "Runs slightly small, size up.", "Comfortable all day.", "Washes well.")
_GRIPE = ("Not worth the price.", "Quality dropped from the last one I bought.", "Returned it.", "Meh.")


def reviews(p: Product) -> list[tuple[str, int, str]]:
    """A handful of (author, stars, text) consistent with the product's average rating."""
    rng = seeded("reviews", p.host, p.id)
    out = []
    for _ in range(min(p.review_count, rng.randint(3, 5))):
        stars = max(1, min(5, round(rng.gauss(p.rating, 0.8))))
        text = rng.choice(_PRAISE + (_FIT if _APPAREL.get(p.category) else ())) if stars >= 4 else rng.choice(_GRIPE)
        out.append((rng.choice(_REVIEWERS), stars, text))
    return out
