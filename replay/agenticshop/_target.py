"""What the hit ratio checks a product against: the user's target brand (from the profile, or the checklist item
naming one) and product type, and what a profile lacks of them."""

from __future__ import annotations

import re

from p2w_rt.schemas import ShopProfile

_BRAND_ITEM = re.compile(
    r"^(?:(?:product |listing )?brand(?: name| field)?|manufacturer)"
    r"(?: is(?: (?:explicitly|clearly))?(?: (?:listed|identified|named) as)?|(?: (?:explicitly|clearly))?"
    r" (?:listed|identified|named) as| exactly matches)"
    r" (?P<rest>.+)$|^product is from (?P<source>.+)$",
    re.IGNORECASE,
)
"""A checklist item that names the brand: "Brand is X", "Brand listed as X", "Product is from X", "Product brand is
explicitly listed as X on the product page", "Product brand field exactly matches "X"", "Manufacturer listed as X"."""
_NAME_END = re.compile(r",|;|\.(?:\s|$)|\s\(|\s(?:on|in|as|at|for|with|and|only|if|when|from|by)\s", re.IGNORECASE)
_OR = re.compile(r"\s+or\s+", re.IGNORECASE)


def _named_brand(item: str) -> str | None:
    """The one brand a checklist item names, or None: none named (a description, "one of", "not"), or several."""
    match = _BRAND_ITEM.match(item.strip())
    if match is None:
        return None
    rest = (match.group("rest") or match.group("source")).strip()
    quoted = re.match(r'^["\u201c](.+?)["\u201d]', rest)
    if quoted:
        return quoted.group(1).strip()
    if re.match(r"(?i)(?:one of|not|a|an|the|any)\b", rest) or ":" in rest:
        return None
    first, *others = _OR.split(rest, maxsplit=1)
    name = _NAME_END.split(first, maxsplit=1)[0].strip()
    if others and others[0][:1].isupper() or "," in first.split(" on ")[0] or not name[:1].isupper():
        return None  # "Seagate or Western Digital", "Jag Jeans, Signature by Levi Strauss": no single brand
    return name


def target_brand(profile: ShopProfile) -> str:
    """The target brand: a profile's ``target_brand``, else the first checklist item naming one brand (``_BRAND_ITEM``:
    "Brand is X", "Brand listed as X", "Product is from X"; not "Brand is one of: ..." nor "Brand is not ...")."""
    extra = (profile.model_extra or {}).get("target_brand")
    if extra:
        return str(extra)
    for item in profile.check_list.brand_preferences:
        brand = _named_brand(item)
        if brand:
            return brand
    return ""


NO_BRAND_ITEM = "no target brand: no target_brand in the profile and no checklist item naming a brand ('Brand is …')"
NO_SINGLE_BRAND = "no target brand: the checklist's brand items name no single brand ('one of', 'not', 'X or Y')"
NO_TYPE = "no product type: seed_product_type is null (open-ended curation)"


def missing_target(profile: ShopProfile) -> str:
    """What the hit ratio lacks for this user, "" when nothing. Said per cause and without the user's id, so a
    replay summary counts each cause once; ``metrics`` lists the users by id."""
    missing = []
    if not target_brand(profile):
        said = any(_BRAND_ITEM.match(i.strip()) for i in profile.check_list.brand_preferences)
        missing.append(NO_SINGLE_BRAND if said else NO_BRAND_ITEM)
    if not profile.seed_product_type:
        missing.append(NO_TYPE)
    return "; ".join(missing)
