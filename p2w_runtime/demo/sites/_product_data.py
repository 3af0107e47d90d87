"""What the two demo shops sell: category recipes for the seeded assortment, and the hand-placed anchors.

Anchors are the products the sample personas' histories mention and the sample tasks target,
together with near misses (right item, wrong size / rating / price) so that filters matter; each group's note in
``products.json`` says which constraint its items test. The tables are data, read here once; a list field given
as a name (``"sizes": "letter"``) is one of the file's ``shared`` lists.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from p2w_runtime.demo.sites.catalog import TEST_DOMAIN

THREADS = f"threads.{TEST_DOMAIN}"
BASKET = f"basket.{TEST_DOMAIN}"

Tagged = tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True)
class CategorySpec:
    host: str
    slug: str
    label: str
    prefix: str
    brands: tuple[str, ...]
    nouns: Tagged
    styles: Tagged
    price: tuple[float, float]
    rating: tuple[float, float, float]
    sizes: tuple[str, ...] = ()
    size_mode: Literal["some", "one", "none"] = "none"
    genders: tuple[str, ...] = ("",)
    colors: tuple[str, ...] = ()
    count: int = 24


def _category(entry: dict[str, Any], shared: dict[str, list[str]]) -> CategorySpec:
    def listed(value: str | list[str]) -> tuple[str, ...]:
        return tuple(shared[value] if isinstance(value, str) else value)

    def tagged(pairs: list[tuple[str, list[str]]]) -> Tagged:
        return tuple((text, tuple(tags)) for text, tags in pairs)

    optional: dict[str, Any] = {key: entry[key] for key in ("size_mode", "count") if key in entry}
    optional |= {key: listed(entry[key]) for key in ("sizes", "genders", "colors") if key in entry}
    return CategorySpec(
        host=f"{entry['shop']}.{TEST_DOMAIN}",
        slug=entry["slug"],
        label=entry["label"],
        prefix=entry["prefix"],
        brands=tuple(entry["brands"]),
        nouns=tagged(entry["nouns"]),
        styles=tagged(entry["styles"]),
        price=(entry["price"][0], entry["price"][1]),
        rating=(entry["rating"][0], entry["rating"][1], entry["rating"][2]),
        **optional,
    )


def _anchor(entry: dict[str, Any]) -> dict[str, Any]:
    """A hand-placed product: ``Product``'s fields but its host."""
    return {**entry, "sizes": tuple(entry["sizes"]), "tags": tuple(entry["tags"]), "color": entry.get("color", "")}


def _load() -> tuple[tuple[CategorySpec, ...], tuple[dict[str, Any], ...]]:
    data = json.loads(Path(__file__).with_name("products.json").read_text(encoding="utf-8"))
    categories = tuple(_category(entry, data["shared"]) for entry in data["categories"])
    return categories, tuple(_anchor(entry) for group in data["anchors"] for entry in group["products"])


CATEGORIES, ANCHORS = _load()
