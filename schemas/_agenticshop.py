"""AgenticShop (Kim et al., WWW 2026) records: user profiles with their checklist, and curated results.

They mirror the reference's files (``data/user_profiles_samples/*_user_profile.json`` and the curation
output ``[{"user", "search_results": [{"product_name", "product_url", "reasoning"}]}]``); reading the
files lives in ``p2w_runtime.data``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

DIMENSIONS = (
    "brand_preferences",
    "price_sensitivity",
    "review_sensitivity",
    "functional_requirements",
    "aesthetic_preferences",
    "purchase_preferences",
)
"""The six checklist dimensions, in the reference's order (its evaluator reports one share per dimension)."""

QueryType = Literal["categorical", "attribute_specific", "brand_categorical", "explicit_title", "generic"]
"""The query variants of the shipped profiles: intent types in the paper's tables."""

RESULTS_JUDGED = 3
"""The reference judges the first three curated products of a user (``search_results[:3]``)."""


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class Checklist(_Record):
    """What the user's product must satisfy, item by item, in each dimension (an item may be empty)."""

    brand_preferences: list[str] = Field(default_factory=list)
    price_sensitivity: list[str] = Field(default_factory=list)
    review_sensitivity: list[str] = Field(default_factory=list)
    functional_requirements: list[str] = Field(default_factory=list)
    aesthetic_preferences: list[str] = Field(default_factory=list)
    purchase_preferences: list[str] = Field(default_factory=list)

    def items(self) -> list[tuple[str, int, str]]:
        """Every item as (dimension, index within it, text): ``brand_preferences.0`` names the first."""
        return [(d, i, text) for d in DIMENSIONS for i, text in enumerate(getattr(self, d))]


class UserContext(_Record):
    """The narrative behind each dimension, generated from the user's purchase history."""

    brand_preferences: str = ""
    price_sensitivity: str = ""
    review_sensitivity: str = ""
    functional_requirements: str = ""
    aesthetic_preferences: str = ""
    purchase_preferences: str = ""


class ShopProfile(_Record):
    """One AgenticShop user: the situation and query an agent gets, and the checklist its products are judged on."""

    model_config = ConfigDict(frozen=True, extra="allow", defer_build=True)

    user: str = Field(min_length=1)
    category: str = ""
    """The reference's category and variant (``clothing``, ``grocery_brand_categorical``...): its file's prefix."""
    seed_product_type: str | None = None
    """None for open-ended curation (``query_type`` generic), as in the reference's ``open`` profiles."""
    situation: str = ""
    budget_range: str | None = None
    query_type: QueryType
    user_query: str = Field(min_length=1)
    user_context: UserContext
    check_list: Checklist

    @property
    def task_id(self) -> str:
        """One user can appear in several grocery variants, so the task is (category, user)."""
        return f"{self.category or 'shop'}-{self.user}"

    @property
    def narrative(self) -> str:
        """Situation, budget and per-dimension context as one text (what a personalized agent is told)."""
        parts = [self.situation, f"Budget: {self.budget_range}" if self.budget_range else ""]
        parts += [f"{d.replace('_', ' ')}: {getattr(self.user_context, d)}" for d in DIMENSIONS]
        return "\n".join(p for p in parts if p and not p.endswith(": "))


class CuratedProduct(_Record):
    model_config = ConfigDict(frozen=True, extra="allow", defer_build=True)

    product_name: str = ""
    product_url: str = Field(min_length=1)
    reasoning: str = ""


class CurationResult(_Record):
    """One user's curated products, as the reference's curation scripts write them."""

    model_config = ConfigDict(frozen=True, extra="allow", defer_build=True)

    user: str = Field(min_length=1)
    search_results: list[CuratedProduct] = Field(default_factory=list)
    error: str | None = None
