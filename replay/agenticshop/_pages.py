"""What a captured page is, by rule: its visible text, its product data, and its attribution class.

AgenticShop counts two attribution errors besides valid products: invalid pages (404, non-existent
products) and irrelevant links (search results, listings, non-product pages). Here they are decided from
the recorded status code, final URL and DOM, so the verdict never depends on the web of judging day.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any, Literal
from urllib.parse import urlsplit

Attribution = Literal["valid", "invalid", "irrelevant"]

NOT_FOUND = re.compile(
    r"\b(page not found|product not found|no longer available|does not exist|couldn.t find (this|that) page|404)\b",
    re.IGNORECASE,
)
"""A soft 404: status 200 with an error page (shops often answer so for removed products)."""
LISTING_PATH = re.compile(r"(^|/)(search|s|browse|category|categories|c|collections?|shop|list|results?)(/|$)", re.I)
LISTING_QUERY = re.compile(r"(^|&)(q|k|query|search|keyword|keywords|term)=", re.IGNORECASE)
TEXT_LIMIT = 20_000
"""Characters of visible page text kept for the extractor and the checklist judge."""


@dataclass(slots=True)
class Page:
    text: str = ""
    title: str = ""
    og_type: str | None = None
    json_ld: list[dict[str, Any]] = field(default_factory=list)

    @property
    def products(self) -> list[dict[str, Any]]:
        """Every schema.org Product in the page's JSON-LD (nested ``@graph`` included)."""
        found: list[dict[str, Any]] = []

        def walk(node: Any) -> None:
            if isinstance(node, list):
                for item in node:
                    walk(item)
            elif isinstance(node, dict):
                kind = node.get("@type")
                kinds = kind if isinstance(kind, list) else [kind]
                if "Product" in kinds:
                    found.append(node)
                for key in ("@graph", "itemListElement", "item"):
                    walk(node.get(key))

        walk(self.json_ld)
        return found

    @property
    def is_item_list(self) -> bool:
        return any(node.get("@type") in ("ItemList", "SearchResultsPage") for node in self.json_ld)


class _Reader(HTMLParser):
    SKIP = frozenset({"script", "style", "noscript", "template", "svg"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page()
        self._stack: list[str] = []
        self._ld: list[str] | None = None
        self._title: list[str] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "script" and a.get("type", "").lower() == "application/ld+json":
            self._ld = []
        elif tag == "title":
            self._title = []
        elif tag == "meta" and a.get("property", "").lower() == "og:type":
            self.page.og_type = a.get("content", "").strip().lower() or None
        if tag not in ("meta", "link", "br", "img", "input", "hr"):
            self._stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._ld is not None:
            try:
                data = json.loads("".join(self._ld))
            except json.JSONDecodeError:
                data = None
            items = data if isinstance(data, list) else [data]
            self.page.json_ld += [d for d in items if isinstance(d, dict)]
            self._ld = None
        if tag == "title" and self._title is not None:
            self.page.title = " ".join("".join(self._title).split())
            self._title = None
        while self._stack:
            if self._stack.pop() == tag:
                break

    def handle_data(self, data: str) -> None:
        if self._ld is not None:
            self._ld.append(data)
        elif self._title is not None:
            self._title.append(data)
        elif not self.SKIP.intersection(self._stack) and data.strip():
            self._text.append(" ".join(data.split()))

    def close(self) -> None:
        super().close()
        self.page.text = "\n".join(self._text)[:TEXT_LIMIT]


def read_page(html: str) -> Page:
    reader = _Reader()
    reader.feed(html)
    reader.close()
    return reader.page


def looks_like_listing(url: str) -> bool:
    parts = urlsplit(url)
    return bool(LISTING_PATH.search(parts.path) or LISTING_QUERY.search(parts.query))


def attribute(status: int | None, url: str, page: Page | None, error: str | None = None) -> tuple[Attribution, str]:
    """Valid product page, invalid page, or irrelevant link, with the rule that decided it."""
    if page is None or status is None:
        return "invalid", f"no page recorded ({error or 'no response'})"
    if status >= 400:
        return "invalid", f"HTTP {status}"
    products = page.products
    if not products and NOT_FOUND.search(f"{page.title}\n{page.text[:2000]}"):
        return "invalid", "error page (not found) served with status 200"
    if page.is_item_list or len(products) > 1:
        return "irrelevant", f"listing of {len(products)} products"
    if products or page.og_type == "product":
        return "valid", "product page (schema.org Product)" if products else "product page (og:type product)"
    if looks_like_listing(url):
        return "irrelevant", "search results or listing URL"
    return "irrelevant", "not a product page (no product data)"
