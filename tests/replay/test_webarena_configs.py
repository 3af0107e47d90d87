"""WebArena task configs: all 812 real ones parse; malformed ones are reported by file, task and field."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from p2w_rt.replay.webarena import WebArenaConfigError, load_tasks, parse_task, substitute_sites
from tests.helpers.paths import DATA

REAL = DATA / "webarena" / "test.raw.json"


def test_all_812_real_configs_parse() -> None:
    tasks = load_tasks(REAL)
    assert len(tasks) == 812
    kinds = Counter(t for task in tasks.values() for t in task.eval.eval_types)
    assert kinds == {"string_match": 335, "program_html": 411, "url_match": 205}
    checks = [c for task in tasks.values() for c in task.eval.checks]
    assert len(checks) == 651
    assert sum(1 for c in checks if c.required_contents.exact_match is not None) == 188
    assert sum(1 for c in checks if c.prep_actions) == 10
    fuzzy_na = [t for t in tasks.values() if t.eval.answers.get("fuzzy_match") == "N/A"]
    assert len(fuzzy_na) == 36
    assert tasks["0"].eval.answers == {"exact_match": "Quest Lumaflex™ Band"}


def test_config_directory_and_single_file(tmp_path: Path) -> None:
    raw = json.loads(REAL.read_text())
    for item in raw[:3]:
        (tmp_path / f"{item['task_id']}.json").write_text(json.dumps(item))
    assert sorted(load_tasks(tmp_path)) == ["0", "1", "2"]
    assert list(load_tasks(tmp_path / "1.json")) == ["1"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"eval_types": ["url_match"], "reference_url": ""}, "url_match needs reference_url"),
        ({"eval_types": ["string_match"], "reference_answers": None}, "string_match needs reference_answers"),
        ({"eval_types": ["program_html"], "program_html": []}, "program_html needs at least one check"),
        ({"eval_types": ["dom_match"]}, "eval.eval_types.0"),
        (
            {"eval_types": ["program_html"], "program_html": [{"url": "last", "locator": "", "required_contents": {}}]},
            "required_contents needs exact_match or must_include",
        ),
    ],
)
def test_malformed_config_names_task_and_field(change: dict, message: str) -> None:
    base = {
        "task_id": 7,
        "intent": "x",
        "eval": {"eval_types": ["string_match"], "reference_answers": {"exact_match": "a"}},
    }
    base["eval"].update(change)
    with pytest.raises(WebArenaConfigError, match=message) as info:
        parse_task(base, "cfg.json")
    assert "cfg.json: task 7" in str(info.value)


def test_unreadable_files_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(WebArenaConfigError, match="not found"):
        load_tasks(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(WebArenaConfigError, match="invalid JSON at line 1"):
        load_tasks(bad)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(WebArenaConfigError, match="no \\*.json"):
        load_tasks(empty)


def test_site_placeholders_substitute_longest_first() -> None:
    urls = {"shopping_admin": "http://admin.test/", "shopping": "http://shop.test"}
    assert substitute_sites("__SHOPPING_ADMIN__/sales", urls) == "http://admin.test/sales"
    assert substitute_sites("__SHOPPING__/cart |OR| __GITLAB__/x", urls) == "http://shop.test/cart |OR| __GITLAB__/x"
