"""What the two demo shops sell: category recipes for the seeded assortment, and the hand-placed anchors.

Anchors are the products the sample personas' histories mention and the sample tasks target,
together with near misses (right item, wrong size / rating / price) so that filters matter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from p2w_runtime.sites.catalog import TEST_DOMAIN

THREADS = f"threads.{TEST_DOMAIN}"
BASKET = f"basket.{TEST_DOMAIN}"

LETTER = ("XS", "S", "M", "L", "XL", "XXL")
WAIST = ("30x30", "30x32", "32x30", "32x32", "34x30", "34x32", "36x30", "36x32", "38x32")
SHOE = ("7", "7.5", "8", "8.5", "9", "9.5", "10", "10.5", "11", "11.5", "12", "13")
COLORS = ("Black", "Navy", "Heather Gray", "Olive", "Khaki", "Burgundy", "Slate Blue", "White", "Sand", "Forest Green")

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


def _t(*items: str) -> Tagged:
    """``"Noun|tag,tag"`` strings to (noun, tags) pairs: keeps the tables below readable."""
    out = []
    for item in items:
        text, _, tags = item.partition("|")
        out.append((text, tuple(t for t in tags.split(",") if t)))
    return tuple(out)


CATEGORIES: tuple[CategorySpec, ...] = (
    CategorySpec(
        THREADS, "womens-leggings", "Women's Leggings", "thr-wl", ("Stride", "Pacer", "Lumen", "Northloop", "Kinetic"),
        _t("Running Leggings|running", "Training Tights|training", "Yoga Leggings|yoga", "7/8 Leggings|training"),
        _t("High-Rise|", "Seamless|", "Pocket|pockets", "Thermal|warm", "Everyday|"),
        (22, 110), (3.2, 4.3, 4.9), LETTER, "some", ("Women's",), COLORS, 30,
    ),
    CategorySpec(
        THREADS, "womens-tops", "Women's Tops", "thr-wt", ("Stride", "Lumen", "Fieldday", "Kinetic"),
        _t("Running Tank|running", "Training Tee|training", "Long-Sleeve Top|", "Sports Bra|training"),
        _t("Breathable|moisture-wicking", "Relaxed|", "Cropped|", "Merino|wool"),
        (18, 75), (3.1, 4.2, 4.9), LETTER, "some", ("Women's",), COLORS, 20,
    ),
    CategorySpec(
        THREADS, "womens-jackets", "Women's Jackets", "thr-wj", ("Cascade", "Northloop", "Lumen", "Ridgeline"),
        _t("Rain Jacket|waterproof,hooded", "Rain Shell|waterproof,hooded", "Puffer Jacket|insulated,warm",
           "Windbreaker|water-resistant", "Fleece Jacket|warm"),
        _t("Packable|packable", "Storm|", "Trail|", "City|", "Lightweight|"),
        (45, 240), (3.3, 4.3, 4.9), LETTER, "some", ("Women's",), COLORS, 24,
    ),
    CategorySpec(
        THREADS, "mens-pants", "Men's Pants", "thr-mp", ("Harbor", "Dockyard", "Fairway", "Northloop", "Mason"),
        _t("Chinos|chino", "Jeans|denim", "Travel Pants|stretch"),
        _t("Slim|slim-fit", "Straight|straight-fit", "Stretch|stretch", "Athletic|athletic-fit", "Tapered|slim-fit"),
        (28, 120), (3.2, 4.2, 4.9), WAIST, "some", ("Men's",), COLORS, 30,
    ),
    CategorySpec(
        THREADS, "mens-tops", "Men's Tees & Shirts", "thr-mt", ("Harbor", "Kinetic", "Fieldday", "Mason"),
        _t("Crew Tee|", "Oxford Shirt|", "Training Tee|training", "Polo|", "Flannel Shirt|warm"),
        _t("Classic|", "Slim|slim-fit", "Organic Cotton|cotton", "Performance|moisture-wicking"),
        (15, 85), (3.1, 4.2, 4.9), LETTER, "some", ("Men's",), COLORS, 24,
    ),
    CategorySpec(
        THREADS, "mens-jackets", "Men's Jackets", "thr-mj", ("Cascade", "Ridgeline", "Mason", "Northloop"),
        _t("Rain Jacket|waterproof,hooded", "Puffer Jacket|insulated,warm", "Chore Coat|", "Softshell|water-resistant"),
        _t("Packable|packable", "Storm|", "Everyday|", "Alpine|warm"),
        (55, 260), (3.3, 4.3, 4.9), LETTER, "some", ("Men's",), COLORS, 18,
    ),
    CategorySpec(
        THREADS, "running-shoes", "Running Shoes", "thr-rs", ("Ridgeline", "Talus", "Summit", "Stride", "Pacer"),
        _t("Trail Running Shoes|trail,running", "Road Running Shoes|road,running", "Trail Runners|trail,running",
           "Racing Flats|road,racing"),
        _t("Cushioned|cushioned", "Lightweight|", "GTX|waterproof", "Stability|stability", "Grip|"),
        (65, 210), (3.3, 4.3, 4.9), SHOE, "some", ("Men's", "Women's"), COLORS, 32,
    ),
    CategorySpec(
        THREADS, "hoodies", "Hoodies & Sweatshirts", "thr-hd", ("Fieldday", "Mason", "Kinetic", "Harbor"),
        _t("Pullover Hoodie|hooded", "Zip Hoodie|hooded", "Crewneck Sweatshirt|"),
        _t("Fleece|warm", "Heavyweight|warm", "Organic Cotton|cotton", "Vintage Wash|"),
        (30, 95), (3.2, 4.3, 4.9), LETTER, "some", ("Men's", "Women's"), COLORS, 16,
    ),
    CategorySpec(
        BASKET, "plant-milk", "Milk & Plant Milk", "bsk-pm", ("Oatley Farms", "Good Grain", "Meadow & Co", "Silkwood"),
        _t("Oat Milk|oat,dairy-free", "Almond Milk|almond,dairy-free", "Soy Milk|soy,dairy-free",
           "Coconut Milk|coconut,dairy-free", "Whole Milk|dairy"),
        _t("Unsweetened|unsweetened", "Original|", "Vanilla|vanilla", "Chocolate|chocolate", "Barista|barista",
           "Extra Creamy|"),
        (2.29, 9.99), (3.2, 4.3, 4.9), ("32 oz", "64 oz", "6 x 32 oz"), "one", count=28,
    ),
    CategorySpec(
        BASKET, "pasta", "Pasta & Grains", "bsk-pa", ("Meadow & Co", "Good Grain", "Basket Essentials", "Trattoria"),
        _t("Penne|pasta", "Spaghetti|pasta", "Fusilli|pasta", "Rotini|pasta", "Elbows|pasta"),
        _t("Gluten-Free Brown Rice|gluten-free", "Gluten-Free Chickpea|gluten-free,high-protein", "Whole Wheat|",
           "Classic|", "Organic|organic", "Protein|high-protein"),
        (1.29, 6.49), (3.3, 4.3, 4.9), ("8 oz", "12 oz", "16 oz", "2 lb"), "one", count=28,
    ),
    CategorySpec(
        BASKET, "coffee", "Coffee & Tea", "bsk-cf", ("Daybreak", "Roastery Row", "Basket Essentials", "Highline"),
        _t("Whole Bean Coffee|whole-bean", "Ground Coffee|ground", "Coffee Pods|pods"),
        _t("Light Roast|light-roast", "Medium Roast|medium-roast", "Dark Roast|dark-roast",
           "Decaf Medium Roast|decaf,medium-roast", "Espresso Roast|dark-roast"),
        (5.99, 24.99), (3.3, 4.3, 4.9), ("12 oz", "2 lb", "24 ct"), "one", count=20,
    ),
    CategorySpec(
        BASKET, "audio", "Headphones & Earbuds", "bsk-au", ("Sonora", "Pulse", "Auralite", "Wavelength"),
        _t("Wireless Earbuds|wireless", "Noise Cancelling Earbuds|wireless,active noise cancelling",
           "Over-Ear Headphones|wireless", "Noise Cancelling Headphones|wireless,active noise cancelling",
           "Sport Earbuds|wireless,sweat-resistant"),
        _t("Pro|", "Lite|", "Max|", "Air|", "Studio|"),
        (19, 349), (3.0, 4.1, 4.8), count=24,
    ),
    CategorySpec(
        BASKET, "household", "Household", "bsk-hh", ("Basket Essentials", "CleanCo", "Greenway"),
        _t("Paper Towels|", "Dish Soap|", "Laundry Detergent|", "Trash Bags|", "Sponges|"),
        _t("Value Pack|", "Free & Clear|fragrance-free", "Lemon|", "Eco|plant-based"),
        (2.99, 24.99), (3.3, 4.3, 4.8), ("6 ct", "12 ct", "24 ct"), "one", count=18,
    ),
    CategorySpec(
        BASKET, "basics", "Basics & Activewear", "bsk-ba", ("Basket Essentials", "Everyday Co"),
        _t("Running Leggings|running", "Crew Tee|", "Athletic Socks|", "Rain Jacket|waterproof,hooded",
           "Chinos|chino"),
        _t("Basic|", "Value|", "Active|"),
        (6, 45), (2.6, 3.5, 4.2), LETTER, "some", ("Women's", "Men's"), COLORS, 20,
    ),
)


def _anchor(pid: str, category: str, name: str, brand: str, price: float, rating: float, reviews: int,
            sizes: tuple[str, ...], tags: str, color: str = "") -> dict:
    return {"id": pid, "category": category, "name": name, "brand": brand, "price": price, "rating": rating,
            "review_count": reviews, "sizes": sizes, "tags": tuple(t for t in tags.split(",") if t), "color": color}


ANCHORS: tuple[dict, ...] = (
    # Leggings: one fits size M / 4.5+ / under $60, the others each miss one constraint.
    _anchor("thr-a01", "womens-leggings", "Stride Women's High-Rise Running Leggings", "Stride", 54.00, 4.7, 1284,
            ("XS", "S", "M", "L", "XL"), "running,pockets", "Black"),
    _anchor("thr-a02", "womens-leggings", "Pacer Women's 7/8 Training Tights", "Pacer", 48.00, 4.6, 512,
            ("S", "M", "L"), "training,running", "Navy"),
    _anchor("thr-a03", "womens-leggings", "Lumen Women's Seamless Yoga Leggings", "Lumen", 88.00, 4.8, 2210,
            ("XS", "S", "M", "L"), "yoga", "Heather Gray"),
    _anchor("thr-a04", "womens-leggings", "Northloop Women's Pocket Running Leggings", "Northloop", 45.00, 4.8, 367,
            ("XS", "S", "L", "XL"), "running,pockets", "Olive"),
    _anchor("thr-a05", "womens-leggings", "Kinetic Women's Everyday Running Leggings", "Kinetic", 32.00, 4.1, 95,
            ("S", "M", "L", "XL"), "running", "Black"),
    # Chinos: 34x30 / 4+ stars / under $50.
    _anchor("thr-a11", "mens-pants", "Harbor Men's Slim Chinos", "Harbor", 42.00, 4.4, 876,
            ("30x30", "32x30", "32x32", "34x30", "34x32", "36x32"), "chino,slim-fit", "Khaki"),
    _anchor("thr-a12", "mens-pants", "Dockyard Men's Stretch Chinos", "Dockyard", 38.00, 3.7, 203,
            ("32x30", "34x30", "36x30"), "chino,stretch", "Navy"),
    _anchor("thr-a13", "mens-pants", "Fairway Men's Slim Chinos", "Fairway", 68.00, 4.6, 451,
            ("32x32", "34x30", "34x32"), "chino,slim-fit", "Olive"),
    _anchor("thr-a14", "mens-pants", "Mason Men's Tapered Chinos", "Mason", 44.00, 4.5, 318,
            ("30x30", "32x32", "34x32", "36x32"), "chino,slim-fit", "Sand"),
    # Rain jackets: size S and waterproof.
    _anchor("thr-a21", "womens-jackets", "Cascade Women's Storm Rain Shell", "Cascade", 129.00, 4.6, 689,
            ("XS", "S", "M", "L"), "waterproof,hooded", "Forest Green"),
    _anchor("thr-a22", "womens-jackets", "Northloop Women's Packable Rain Jacket", "Northloop", 89.00, 4.4, 254,
            ("S", "M", "L", "XL"), "waterproof,hooded,packable", "Slate Blue"),
    _anchor("thr-a23", "womens-jackets", "Lumen Women's City Windbreaker", "Lumen", 72.00, 4.5, 198,
            ("XS", "S", "M"), "water-resistant", "Sand"),
    # Trail shoes: men's 10.5 under $130.
    _anchor("thr-a31", "running-shoes", "Ridgeline Men's Trail Running Shoes", "Ridgeline", 119.00, 4.5, 934,
            ("9", "9.5", "10", "10.5", "11", "12"), "trail,running", "Slate Blue"),
    _anchor("thr-a32", "running-shoes", "Talus Men's Grip Trail Runners", "Talus", 104.00, 4.3, 276,
            ("8.5", "9.5", "10", "10.5", "11.5"), "trail,running", "Olive"),
    _anchor("thr-a33", "running-shoes", "Summit Men's GTX Trail Running Shoes", "Summit", 165.00, 4.7, 512,
            ("9", "10", "10.5", "11"), "trail,running,waterproof", "Black"),
    _anchor("thr-a34", "running-shoes", "Pacer Men's Lightweight Trail Runners", "Pacer", 96.00, 4.4, 143,
            ("9", "10", "11", "12"), "trail,running", "Burgundy"),
    # Oat milk: unsweetened, 64 oz.
    _anchor("bsk-a01", "plant-milk", "Oatley Farms Unsweetened Oat Milk", "Oatley Farms", 4.79, 4.6, 1530,
            ("64 oz",), "oat,dairy-free,unsweetened"),
    _anchor("bsk-a02", "plant-milk", "Good Grain Unsweetened Oat Milk", "Good Grain", 3.29, 4.4, 620,
            ("32 oz",), "oat,dairy-free,unsweetened"),
    _anchor("bsk-a03", "plant-milk", "Oatley Farms Original Oat Milk", "Oatley Farms", 4.49, 4.5, 1104,
            ("64 oz",), "oat,dairy-free"),
    # Pasta: gluten-free and organic penne.
    _anchor("bsk-a11", "pasta", "Meadow & Co Organic Gluten-Free Brown Rice Penne", "Meadow & Co", 3.99, 4.5, 842,
            ("12 oz",), "pasta,gluten-free,organic"),
    _anchor("bsk-a12", "pasta", "Good Grain Gluten-Free Chickpea Penne", "Good Grain", 3.49, 4.4, 1290,
            ("8 oz",), "pasta,gluten-free,high-protein"),
    _anchor("bsk-a13", "pasta", "Meadow & Co Organic Whole Wheat Penne", "Meadow & Co", 2.79, 4.3, 377,
            ("16 oz",), "pasta,organic"),
    # Earbuds: active noise cancelling under $100.
    _anchor("bsk-a21", "audio", "Sonora Noise Cancelling Wireless Earbuds", "Sonora", 89.00, 4.5, 2043,
            (), "wireless,active noise cancelling"),
    _anchor("bsk-a22", "audio", "Pulse Sport Wireless Earbuds", "Pulse", 39.00, 4.2, 1788,
            (), "wireless,sweat-resistant"),
    _anchor("bsk-a23", "audio", "Auralite Pro Noise Cancelling Earbuds", "Auralite", 179.00, 4.7, 3310,
            (), "wireless,active noise cancelling"),
)
