"""Attribution and extraction rules on captured pages: product, soft 404, listings, missing responses."""

from __future__ import annotations

import json

import pytest

from p2w_rt.replay.agenticshop import attribute, extract_by_rules, read_page


def ld(*items: dict) -> str:
    return "".join(f'<script type="application/ld+json">{json.dumps(i)}</script>' for i in items)


PRODUCT = {
    "@context": "https://schema.org",
    "@type": "Product",
    "name": "Ridgeline Trail Shoe",
    "brand": {"@type": "Brand", "name": "Ridgeline"},
    "category": "Running Shoes",
    "offers": {"@type": "Offer", "price": "1,119.00", "priceCurrency": "USD", "seller": {"name": "Threads"}},
    "aggregateRating": {"ratingValue": 4.5, "reviewCount": "934"},
    "review": [{"reviewBody": "Great grip"}, {"author": "no body"}],
    "additionalProperty": [{"name": "Color", "value": "Olive"}],
}


def page(body: str, title: str = "Shop") -> str:
    return f"<html><head><title>{title}</title></head><body><script>var x = 'hidden';</script>{body}</body></html>"


def test_product_page_is_valid_and_read_by_rule() -> None:
    p = read_page(page("<h1>Ridgeline Trail Shoe</h1><p>Great grip</p>" + ld(PRODUCT)))
    assert attribute(200, "http://shop/p/1", p) == ("valid", "product page (schema.org Product)")
    assert "hidden" not in p.text and "Great grip" in p.text and p.title == "Shop"
    info = extract_by_rules(p)
    assert info is not None
    assert (info.name, info.brand, info.price, info.currency) == ("Ridgeline Trail Shoe", "Ridgeline", 1119.0, "USD")
    assert (info.rating, info.review_count, info.reviews) == (4.5, 934, ["Great grip"])
    assert info.details == ["Color: Olive", "Seller: Threads"]


def test_product_nested_in_a_graph_and_og_type() -> None:
    graph = {"@context": "https://schema.org", "@graph": [{"@type": "WebPage"}, PRODUCT]}
    assert attribute(200, "http://shop/x", read_page(page(ld(graph))))[0] == "valid"
    og = read_page(page('<meta property="og:type" content="product"><p>A lamp</p>'))
    assert attribute(200, "http://shop/lamp", og) == ("valid", "product page (og:type product)")
    assert extract_by_rules(og) is None  # no schema.org data: the LLM extracts


@pytest.mark.parametrize(
    ("status", "url", "html", "expected"),
    [
        (404, "http://shop/p/gone", page("<p>Product not found</p>"), ("invalid", "HTTP 404")),
        (503, "http://shop/p/1", page(ld(PRODUCT)), ("invalid", "HTTP 503")),
        (
            200,
            "http://shop/p/gone",
            page("<h1>Sorry, this page does not exist</h1>", "Oops"),
            ("invalid", "error page (not found) served with status 200"),
        ),
        (
            200,
            "http://shop/list",
            page(ld({"@type": "ItemList", "itemListElement": [{"@type": "ListItem", "item": PRODUCT}] * 2})),
            ("irrelevant", "listing of 2 products"),
        ),
        (200, "http://shop/s?k=shoes", page("<p>48 results</p>"), ("irrelevant", "search results or listing URL")),
        (200, "http://shop/category/shoes", page("<p>Shoes</p>"), ("irrelevant", "search results or listing URL")),
        (200, "http://shop/about", page("<p>About us</p>"), ("irrelevant", "not a product page (no product data)")),
    ],
)
def test_attribution_classes(status: int, url: str, html: str, expected: tuple[str, str]) -> None:
    assert attribute(status, url, read_page(html)) == expected


def test_nothing_recorded_is_an_invalid_page() -> None:
    assert attribute(None, "http://nowhere.invalid/", None, "net::ERR_NAME_NOT_RESOLVED") == (
        "invalid",
        "no page recorded (net::ERR_NAME_NOT_RESOLVED)",
    )


def test_broken_json_ld_is_ignored_not_fatal() -> None:
    p = read_page(page('<script type="application/ld+json">{not json</script><p>About</p>'))
    assert p.json_ld == [] and attribute(200, "http://shop/about", p)[0] == "irrelevant"


def test_show_gives_each_capture_its_link_status_and_error() -> None:
    from p2w_rt.replay.timeline import gist
    from p2w_runtime.domain.trajectory import CaptureRecord

    ok = CaptureRecord("e1", 0, "http://s/p/1", "http://s/p/1?ref=x", 200, "Shoe")
    assert gist(ok) == "link #0 http://s/p/1: HTTP 200 http://s/p/1?ref=x Shoe"
    failed = CaptureRecord("e2", 2, "http://s/p/3", None, None, error="net::ERR_CONNECTION_REFUSED")
    assert gist(failed) == "link #2 http://s/p/3: net::ERR_CONNECTION_REFUSED"
