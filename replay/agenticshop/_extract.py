"""Product information from a captured page: by rule from schema.org data, else by the LLM.

The reference's extractor asks an LLM for the main product's description and reviews from the page text
and structured metadata. Pages with a schema.org ``Product`` (the demo shop's, most shops') need no model:
the fields are read as they are. Either way the result is the same ``ProductInfo``.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from p2w_rt.replay.agenticshop._pages import Page

EXTRACT_SYSTEM = "You are a precise product information extractor."
EXTRACT_TEMPLATE = """Extract structured product information from this page: {url}

--- Parsed Page Content ---
{text}

Guidelines:
1. Identify the main product on the page; tell it apart from variants and advertisements.
2. Extract everything about the main product: description, price, specifications, shipping, seller, returns.
3. Extract the review information: rating, review count, review texts.
4. If the page is not a specific product page, leave the fields empty."""


class ProductInfo(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    name: str = ""
    brand: str = ""
    category: str = ""
    price: float | None = None
    currency: str = ""
    rating: float | None = None
    review_count: int | None = None
    description: str = ""
    details: list[str] = Field(default_factory=list, description="Specifications, shipping, seller, returns")
    reviews: list[str] = Field(default_factory=list)
    source: str = Field(default="", description="rules (schema.org) or the extracting model")


def _text(value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get("name") or "")
    if isinstance(value, list):
        return ", ".join(_text(v) for v in value)
    return "" if value is None else str(value)


def _number(value: Any) -> float | None:
    try:
        return float(str(value).replace(",", "")) if value not in (None, "") else None
    except ValueError:
        return None


def extract_by_rules(page: Page) -> ProductInfo | None:
    """The page's single schema.org Product as ``ProductInfo``, or None when it has none (or several)."""
    products = page.products
    if len(products) != 1:
        return None
    p = products[0]
    offers = p.get("offers") or {}
    first = offers[0] if isinstance(offers, list) and offers else offers
    offer: dict[str, Any] = first if isinstance(first, dict) else {}
    found = p.get("aggregateRating")
    rating: dict[str, Any] = found if isinstance(found, dict) else {}
    reviews = p.get("review") or []
    reviews = reviews if isinstance(reviews, list) else [reviews]
    details = [
        f"{prop.get('name')}: {prop.get('value')}"
        for prop in (p.get("additionalProperty") or [])
        if isinstance(prop, dict) and prop.get("name")
    ]
    seller = _text(offer.get("seller"))
    if seller:
        details.append(f"Seller: {seller}")
    for key, label in (("shippingDetails", "Shipping"), ("hasMerchantReturnPolicy", "Returns")):
        if offer.get(key):
            value = offer[key]
            details.append(f"{label}: {value.get('description', '') if isinstance(value, dict) else value}")
    count = _number(rating.get("reviewCount") or rating.get("ratingCount"))
    return ProductInfo(
        name=_text(p.get("name")),
        brand=_text(p.get("brand")),
        category=_text(p.get("category")),
        price=_number(offer.get("price")),
        currency=_text(offer.get("priceCurrency")),
        rating=_number(rating.get("ratingValue")),
        review_count=int(count) if count is not None else None,
        description=_text(p.get("description")),
        details=details,
        reviews=[_text(r.get("reviewBody")) for r in reviews if isinstance(r, dict) and r.get("reviewBody")],
        source="rules (schema.org Product)",
    )


def extraction_messages(url: str, page: Page) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": EXTRACT_SYSTEM},
        {"role": "user", "content": EXTRACT_TEMPLATE.format(url=url, text=page.text)},
    ]


def info_text(info: ProductInfo) -> str:
    """The product as the checklist judge reads it (the reference passes its extraction result as JSON)."""
    return json.dumps(info.model_dump(exclude={"source"}), ensure_ascii=False, indent=1)
