"""``hit-ratio`` on AgenticShop's real profiles: what a profile lacks for a hit ratio, said per cause, and the
``metrics`` tables naming the users the figure is over."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.replay.agenticshop import missing_target, target_brand
from p2w_runtime.data import load_profiles
from tests.helpers.paths import DATA

SHOP = DATA / "agenticshop"
NO_ITEM = "no target brand: no target_brand in the profile and no checklist item naming a brand ('Brand is …')"
NO_SINGLE = "no target brand: the checklist's brand items name no single brand ('one of', 'not', 'X or Y')"
NO_TYPE = "no product type: seed_product_type is null (open-ended curation)"
NEW_BALANCE = "AELDDK2E3MWFFRD7MW6PMOB65FRA"
"""The one shipped user with a target brand: "Brand is New Balance"."""


def test_what_each_shipped_profile_lacks_for_a_hit_ratio() -> None:
    profiles = load_profiles(SHOP)
    causes = Counter(missing_target(p) for p in profiles)
    assert causes == {
        NO_ITEM: 11,  # brand items describe the brand ("a heritage, craft ... label", "RAM MOUNTS as the manufacturer")
        NO_SINGLE: 14,  # "Brand is one of: ...", "Brand is not ...", "Seagate or Western Digital", "Jag Jeans, ..."
        f"{NO_ITEM}; {NO_TYPE}": 5,  # only the open-ended users lack the type
        "": 5,
    }
    computable = [(p.task_id.split("-")[0], target_brand(p)) for p in profiles if not missing_target(p)]
    assert sorted(computable) == [
        ("clothing", "Easy Spirit"),  # "Product is from Easy Spirit or explicitly listed as the same ... line"
        ("clothing", "New Balance"),  # "Brand is New Balance"
        ("electronics", "Dentsing"),  # "Product brand is explicitly listed as Dentsing on the product page ..."
        ("electronics", "Lorex"),  # "Brand listed as Lorex"
        ("home", "Classic Magnets Made with Pride in the USA"),  # 'Product brand field exactly matches "..."'
    ]
    negated = {p.task_id: missing_target(p) for p in profiles}["clothing-AGZMKHWSCB3UXDGFUPFRZSL4EAWQ"]
    assert negated == NO_SINGLE  # "Brand is not ..." names no target brand


def invoke(db: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


PRODUCT = {"@type": "Product", "name": "Fresh Foam Trail Running Shoe", "brand": "New Balance", "category": "Shoes"}


def curate(tmp_path: Path, db: Path, category: str) -> None:
    """Import one curated link per user of ``category``'s shipped profiles; only New Balance's page is captured."""
    profiles = SHOP / f"{category}_user_profile.json"
    users = [p.user for p in load_profiles(profiles)]
    results = [
        {"user": u, "search_results": [{"product_name": "P", "product_url": f"https://shop.example/{u}"}]}
        for u in users
    ]
    (tmp_path / f"{category}.json").write_text(json.dumps(results))
    folder = tmp_path / "captures"
    folder.mkdir(exist_ok=True)
    (folder / "p.html").write_text(
        f'<html><body><script type="application/ld+json">{json.dumps(PRODUCT)}</script></body></html>'
    )
    capture = {"url": f"https://shop.example/{NEW_BALANCE}", "status": 200, "html": "p.html"}
    (folder / "captures.jsonl").write_text(json.dumps(capture) + "\n")
    args = ("import-curation", str(tmp_path / f"{category}.json"), "--profiles", str(profiles))
    code, _, err = invoke(db, *args, "--captures", str(folder), "--label", category)
    assert code == 0, err


def test_metrics_name_the_users_the_hit_ratio_is_over(tmp_path: Path) -> None:
    db = tmp_path / "hit.db"
    curate(tmp_path, db, "clothing")
    curate(tmp_path, db, "open")
    code, out, err = invoke(db, "replay", "clothing", "--judge", "hit-ratio", "--profiles", str(SHOP))
    assert code == 1  # a user without a target is a failed judgment, never a hit ratio of 0
    assert f"3 results failed with: {NO_SINGLE}\n" in err and NO_ITEM not in err  # Easy Spirit is read now
    assert "open-ended" not in out + err and f"clothing-{NEW_BALANCE}  hit-ratio  hit_ratio=1.000" in out
    code, _, err = invoke(db, "replay", "open", "--judge", "hit-ratio", "--profiles", str(SHOP))
    assert code == 1 and f"5 results failed with: {NO_ITEM}; {NO_TYPE}\n" in err
    code, out, err = invoke(db, "metrics", "clothing", "open", "--judge", "hit-ratio", "--format", "json")
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    users = {r["user"]: (r["hit_ratio"], r["not_computed"]) for r in rows if r["table"] == "hit_ratio"}
    assert len(users) == 10
    assert users[f"clothing-{NEW_BALANCE}"] == (1.0, "")
    assert users["clothing-AEODBPA3DIR3J5BLOQQUCB2KZYQQ"] == (0.0, "")  # "Product is from Easy Spirit": no page
    assert users["clothing-AGJNR6VGW35EPGBETUQ4VYJUOGGA"] == (None, NO_SINGLE)
    assert users["open-AFXF3EGQTQDXMRLDWFU7UBFQZB7Q"] == (None, f"{NO_ITEM}; {NO_TYPE}")
    overall = next(r for r in rows if r["table"] == "by_variant" and r["variant"] == "all")
    assert (overall["users"], overall["hit_users"], overall["hit_ratio"]) == (10, 2, 0.5)
    code, out, _ = invoke(db, "metrics", "clothing", "--judge", "hit-ratio", "--format", "md")
    assert "hit ratio per user" in out and f"| clothing-{NEW_BALANCE} | categorical | 1.0" in out
