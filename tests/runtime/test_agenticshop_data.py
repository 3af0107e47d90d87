"""AgenticShop profiles and curated results: the shipped samples load; malformed files name file and field."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from p2w_rt.schemas import DIMENSIONS
from p2w_runtime.data import DataError, load_curation, load_profiles
from tests.helpers.paths import DATA

SHOP = DATA / "agenticshop"


def test_every_shipped_sample_loads() -> None:
    profiles = load_profiles(SHOP)
    assert len(profiles) == 35  # seven files of five users
    assert {p.query_type for p in profiles} == {
        "categorical",
        "attribute_specific",
        "brand_categorical",
        "explicit_title",
        "generic",
    }
    trail = next(p for p in profiles if p.user == "AELDDK2E3MWFFRD7MW6PMOB65FRA")
    assert trail.category == "clothing" and trail.task_id == "clothing-AELDDK2E3MWFFRD7MW6PMOB65FRA"
    assert trail.check_list.brand_preferences[0] == "Brand is New Balance"
    items = trail.check_list.items()
    assert items[0] == ("brand_preferences", 0, "Brand is New Balance")
    assert [d for d, _, _ in items] == sorted((d for d, _, _ in items), key=DIMENSIONS.index)
    assert "New Balance" in trail.narrative and trail.situation in trail.narrative
    # open-ended curation has no product type and no budget, as in the reference's data
    assert all(p.seed_product_type is None for p in profiles if p.query_type == "generic")
    # one user appears in several grocery variants: the task id keeps them apart
    assert len({p.task_id for p in profiles}) == 35 > len({p.user for p in profiles})


def _write(tmp_path: Path, profiles: object, name: str = "home_user_profile.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(profiles))
    return path


def _sample() -> dict:
    return json.loads((SHOP / "home_user_profile.json").read_text())[1]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda p: p.pop("check_list"), "[0] (user {user}): check_list: Field required"),
        (lambda p: p.update(query_type="vague"), "[0] (user {user}): query_type: Input should be"),
        (lambda p: p["check_list"].update(brand_preferences="Brand is X"), "check_list.brand_preferences: Input"),
        (lambda p: p["check_list"].update(colour=["red"]), "check_list.colour: Extra inputs are not permitted"),
        (lambda p: p.update(user_query=""), "user_query: String should have at least 1 character"),
    ],
)
def test_malformed_profile_names_file_record_and_field(
    tmp_path: Path, mutate: Callable[[dict], object], message: str
) -> None:
    profile = _sample()
    mutate(profile)
    path = _write(tmp_path, [profile])
    with pytest.raises(DataError) as err:
        load_profiles(path)
    text = str(err.value)
    assert text.startswith(str(path)) and message.format(user=profile.get("user")) in text and "\n" not in text


def test_not_a_list_duplicates_and_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="expected a JSON list of user profiles, got dict"):
        load_profiles(_write(tmp_path, {"user": "x"}))
    with pytest.raises(DataError, match=r"user .* \(home\) is also in"):
        load_profiles(_write(tmp_path, [_sample(), _sample()]))
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="no \\*_user_profile.json file"):
        load_profiles(tmp_path / "empty")
    broken = tmp_path / "clothing_user_profile.json"
    broken.write_text("[{")
    with pytest.raises(DataError, match="invalid JSON at line 1"):
        load_profiles(broken)


def test_curated_results_in_the_reference_format(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        [
            {
                "user": "U1",
                "search_results": [
                    {"product_name": "Trail shoe", "product_url": "http://shop/p/1", "reasoning": "fits"},
                ],
            },
            {"user": "U2", "search_results": [], "error": "timeout"},
        ],
        "clothing_search_output.json",
    )
    results = load_curation(path)
    assert [r.user for r in results] == ["U1", "U2"]
    assert results[0].search_results[0].product_url == "http://shop/p/1" and results[1].error == "timeout"
    bad = _write(tmp_path, [{"user": "U1", "search_results": [{"product_name": "no url"}]}], "bad.json")
    with pytest.raises(DataError, match=r"\[0\] \(user U1\): search_results.0.product_url: Field required"):
        load_curation(bad)
    lines = tmp_path / "c.jsonl"
    lines.write_text('{"user": "U1", "search_results": []}\n{"search_results": []}\n')
    with pytest.raises(DataError, match=r"c.jsonl:2: user: Field required"):
        load_curation(lines)
