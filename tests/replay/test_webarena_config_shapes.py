"""WebArena task configs in the reference's shapes: what loads, what is refused by name, placeholders.

Cases read off WebArena's ``evaluation_harness/evaluators.py`` and ``helper_functions.py``
(``docs/design/webarena-parity.md``); the real configs are ``tests/data/webarena/test.raw.json``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from p2w_rt.replay.webarena import WebArenaConfigError, exact_match, load_tasks, must_include, parse_task
from tests.helpers.webarena_support import REAL, SITES

GITLAB = SITES["gitlab"]


def html_eval(*checks: dict[str, Any]) -> dict[str, Any]:
    return {"eval_types": ["program_html"], "program_html": list(checks)}


# -- configs in WebArena's shapes -----------------------------------------------------------


@pytest.mark.parametrize(
    "shape",
    [
        {"eval_types": ["program_html"], "reference_answers": [], "reference_url": "",
         "program_html": [{"url": "last", "locator": "", "required_contents": {"must_include": ["x"]}}]},
        {"eval_types": ["string_match"], "reference_answers": {"must_include": ["1985/04/18"]}, "reference_url": "",
         "program_html": [{"url": "", "required_contents": []}]},
        {"eval_types": ["url_match"], "reference_answers": None, "reference_url": "https://www.google.com/",
         "program_html": None},
        {"eval_types": ["string_match"], "reference_answers": {"exact_match": "a"}, "reference_url": None,
         "program_html": None, "url_note": "EXACT", "string_note": None, "reference_answer_raw_annotation": "A"},
    ],
)  # fmt: skip
def test_webarena_config_shapes_load(shape: dict[str, Any]) -> None:
    task = parse_task({"task_id": 3, "intent": "i", "eval": shape}, "3.json")
    assert task.eval.eval_types == shape["eval_types"]


def html_only(url: str = "last", locator: str = "", contents: Any = None) -> dict[str, Any]:
    return html_eval({"url": url, "locator": locator, "required_contents": contents or {"exact_match": "a"}})


@pytest.mark.parametrize(
    ("shape", "message"),
    [
        (html_only(contents="Hello"), "field eval.program_html.0.required_contents"),
        (html_only(locator="$('x')"), "unknown locator"),
        (html_only(url="func:os.system('x')"), "unknown helper 'os.system'|not a helper call"),
        (html_only(locator="func:get_role(__page__)"), "unknown helper 'get_role'"),
        (html_only(locator="func:gitlab_get_project_memeber_role('x')"), "takes 2 argument"),
        ({"eval_types": ["url_match"], "reference_url": "http://x", "url_note": "EXACT"}, "unknown url_note 'EXACT'"),
        ({"eval_types": ["string_match"], "reference_answers": []}, "string_match needs reference_answers"),
        ({"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": "N/A"}}, "needs string_note"),
        ({"eval_types": ["string_match"], "reference_answers": {"must_include": "0"}}, "must be a list of strings"),
    ],
)
def test_configs_webarena_would_crash_on_are_rejected_by_name(shape: dict[str, Any], message: str) -> None:
    with pytest.raises(WebArenaConfigError, match=message) as info:
        parse_task({"task_id": 3, "intent": "i", "eval": shape}, "3.json")
    assert str(info.value).startswith("3.json: task 3: field eval")


def test_placeholders_are_replaced_everywhere_in_real_configs() -> None:
    tasks = load_tasks(REAL, SITES)
    dumped = json.dumps([t.model_dump(mode="json") for t in tasks.values()])
    for placeholder in ("__GITLAB__", "__REDDIT__", "__SHOPPING__", "__SHOPPING_ADMIN__", "__MAP__"):
        assert placeholder not in dumped
    assert tasks["44"].eval.reference_url == f"{GITLAB}/dashboard/todos"
    assert tasks["481"].eval.checks[0].url == f"{GITLAB}/byteblaze/dotfiles/-/project_members"


def test_check_functions_match_the_reference_helpers() -> None:
    assert exact_match("'", "") == 1.0
    assert must_include('  "Kent" ', "i live in kent") == 1.0
