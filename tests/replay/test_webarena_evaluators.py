"""Each WebArena evaluator on a recorded final page, with a known pass and a known fail.

program_html runs in real headless Chromium on the recorded DOM (no network: every request
but the recorded page is refused).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from p2w_rt.replay.derived import PassSettings
from p2w_rt.replay.judges import JudgeContext, Scorecard
from p2w_rt.replay.webarena import WebArenaJudge, WebArenaSettings, exact_match, must_include, url_match
from p2w_runtime.llm import LlmClient, RetryPolicy
from p2w_runtime.testing import ScriptedLlm
from p2w_runtime.testing.episodes import EpisodeBuilder

GITLAB = "http://gitlab.test:8023"
FINAL_URL = f"{GITLAB}/byteblaze/dotfiles/-/project_members"
PAGE = """<html><head><title>Members</title><script>document.body.innerHTML = 'scripts must not run'</script></head>
<body><h1 class="title">Project members &amp; roles</h1>
<table><tr class="member"><td class="name">Abishek</td><td class="role">Developer</td></tr>
<tr class="member"><td class="name">Vinta</td><td class="role">Maintainer</td></tr></table>
<input id="note" value="draft"><div class="price">Total: $25.00</div></body></html>"""


def task(task_id: int, eval_block: dict[str, Any], intent: str = "What is asked?") -> dict[str, Any]:
    return {"task_id": task_id, "intent": intent, "eval": eval_block}


def html_check(locator: str, contents: dict[str, Any], url: str = "last", prep: list[str] | None = None) -> dict:
    check: dict[str, Any] = {"url": url, "locator": locator, "required_contents": contents}
    if prep is not None:
        check["prep_actions"] = prep
    return check


CONFIGS = [
    task(1, {"eval_types": ["string_match"], "reference_answers": {"exact_match": "Quest Lumaflex™ Band"}}),
    task(2, {"eval_types": ["string_match"], "reference_answers": {"must_include": ["0"]}}),
    task(3, {"eval_types": ["string_match"], "reference_answers": {"must_include": ["4", "Kent"]}}),
    task(4, {"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": ["April 2023"]}}),
    task(
        5, {"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": "N/A"}, "string_note": "no such order"}
    ),
    task(
        6,
        {
            "eval_types": ["url_match"],
            "url_note": "GOLD in PRED",
            "reference_url": "__GITLAB__/a11y/-/issues/?sort=created_asc&state=opened"
            " |OR| __GITLAB__/a11y/-/issues/?state=all",
        },
    ),
    task(
        7,
        {
            "eval_types": ["program_html"],
            "program_html": [
                html_check("document.querySelector('.title').outerText", {"must_include": ["members & roles"]}),
                html_check(
                    "[...document.querySelectorAll('.member .name')].map(e => e.textContent).join(',')",
                    {"exact_match": "Abishek,Vinta"},
                ),
                html_check(
                    "",
                    {"must_include": ["Maintainer", "$25 |OR| 25.00"]},
                    url="__GITLAB__/byteblaze/dotfiles/-/project_members/",
                ),
                html_check(
                    "document.querySelector('#note').value",
                    {"exact_match": "sent"},
                    prep=["document.querySelector('#note').value = 'sent'"],
                ),
            ],
        },
    ),
    task(
        8,
        {
            "eval_types": ["program_html"],
            "program_html": [
                html_check("document.querySelector('.role').outerText", {"exact_match": "Maintainer"}),
                html_check("document.querySelector('.missing').outerText", {"must_include": ["x"]}),
            ],
        },
    ),
    task(
        9,
        {
            "eval_types": ["program_html"],
            "program_html": [
                html_check("", {"must_include": ["x"]}, url="__GITLAB__/other/page"),
            ],
        },
    ),
    task(
        10,
        {
            "eval_types": ["program_html"],
            "program_html": [
                html_check("func:gitlab_get_project_memeber_role(__page__, 'vinta')", {"must_include": ["Maintainer"]}),
            ],
        },
    ),
    task(
        11,
        {
            "eval_types": ["string_match", "url_match"],
            "reference_answers": {"must_include": ["Vinta"]},
            "reference_url": "__GITLAB__/byteblaze/dotfiles/-/project_members",
        },
    ),
]


@pytest.fixture
async def judge(tmp_path: Path) -> AsyncIterator[WebArenaJudge]:
    """The judge, closed after the test: its page renderer's Chromium ends with it (left open, it lived on until the
    suite ended and left its folders in the temp dir)."""
    path = tmp_path / "configs.json"
    path.write_text(json.dumps(CONFIGS))
    judge = WebArenaJudge(PassSettings(plugins=(WebArenaSettings(configs=str(path), site_urls={"gitlab": GITLAB}),)))
    yield judge
    await judge.aclose()


async def judged(
    judge: WebArenaJudge, task_id: int, answer: str | None = None, url: str = FINAL_URL, llm: Any = None
) -> Scorecard:
    b = EpisodeBuilder("run", str(task_id), level=None)
    b.action(1, "stop", answer or "")
    b.final_state(url, PAGE)
    b.finish("answered" if answer else "no_answer", answer, final_url=url)

    async def get_blob(sha: str) -> bytes:
        return b.blobs[sha]

    return await judge.judge(b.trajectory(), JudgeContext(get_blob=get_blob, llm=llm))


def test_string_checks_keep_webarenas_rules() -> None:
    assert exact_match("Quest Lumaflex™ Band", ' "quest lumaflex™ band" ') == 1.0
    assert must_include("0", "there are 0 reviews", tokenize=True) == 1.0
    assert must_include("0", "there are 10 reviews", tokenize=True) == 0.0
    assert must_include("0", "there are 10 reviews", tokenize=False) == 1.0
    assert url_match(f"{GITLAB}/a/?x=1&y=2", f"{GITLAB}/a/?y=2&x=1&z=3") == (1.0, "reference URL matched")
    assert url_match(f"{GITLAB}/a/?x=1", f"{GITLAB}/a/?x=2")[0] == 0.0


async def test_string_match_exact_and_must_include(judge: WebArenaJudge) -> None:
    assert (await judged(judge, 1, "quest lumaflex™ band")).metrics == {"score": 1.0, "success": 1.0}
    failed = await judged(judge, 1, "Quest Lumaflex Band")
    assert (
        failed.metrics["success"] == 0.0 and failed.evidence["string_match.exact_match"].text == "Quest Lumaflex Band"
    )
    assert (await judged(judge, 2, "It has 0 reviews.")).metrics["score"] == 1.0
    assert (await judged(judge, 2, "It has 10 reviews.")).metrics["score"] == 0.0  # single-character token rule
    assert (await judged(judge, 3, "Kent, 40 miles")).metrics["score"] == 1.0  # several refs: plain substring
    assert (await judged(judge, 3, "Kent")).points == {
        "string_match.must_include.1": 0.0,
        "string_match.must_include.2": 1.0,
    }


async def test_fuzzy_match_goes_through_the_llm_judge(judge: WebArenaJudge, scripted_llm: ScriptedLlm) -> None:
    scripted_llm.script(
        json.dumps({"verdict": "correct", "reason": "same month"}),
        json.dumps({"verdict": "partially correct", "reason": "year missing"}),
        json.dumps({"same_reason": True, "reason": "both say the order does not exist"}),
    )
    llm = LlmClient("gpt-5-mini", base_url=scripted_llm.base_url, api_key="k", retry=RetryPolicy(max_retries=0))
    try:
        assert (await judged(judge, 4, "It was in April 2023", llm=llm)).metrics["score"] == 1.0
        assert (await judged(judge, 4, "April", llm=llm)).metrics["score"] == 0.0
        assert (await judged(judge, 5, "N/A", llm=llm)).metrics["score"] == 1.0  # no call needed
        assert (await judged(judge, 5, "I cannot: there is no such order", llm=llm)).metrics["score"] == 1.0
        assert (await judged(judge, 4, None, llm=llm)).metrics["score"] == 0.0  # empty answer: no call
    finally:
        await llm.aclose()
    requests = scripted_llm.chat_requests
    assert len(requests) == 3
    assert "Reference answer: April 2023" in requests[0]["messages"][1]["content"]


async def test_url_match_with_alternatives_and_query_parameters(judge: WebArenaJudge) -> None:
    good = f"{GITLAB}/a11y/-/issues/?state=opened&sort=created_asc&page=2"
    assert (await judged(judge, 6, "done", url=good)).metrics["score"] == 1.0
    other = f"{GITLAB}/a11y/-/issues/?sort=created_asc&state=all"  # the alternatives' values are pooled
    assert (await judged(judge, 6, "done", url=other)).metrics["score"] == 1.0
    wrong_param = await judged(judge, 6, "done", url=f"{GITLAB}/a11y/-/issues/?state=closed&sort=created_asc")
    assert wrong_param.metrics["score"] == 0.0 and "state" in wrong_param.evidence["url_match"].note
    assert (await judged(judge, 6, "done", url=f"{GITLAB}/other/-/issues")).metrics["score"] == 0.0


async def test_scores_multiply(judge: WebArenaJudge) -> None:
    assert (await judged(judge, 11, "Vinta is the maintainer")).metrics["score"] == 1.0
    wrong_page = await judged(judge, 11, "Vinta is the maintainer", url=f"{GITLAB}/byteblaze/other")
    assert wrong_page.points == {"string_match.must_include.1": 1.0, "url_match": 0.0}
    assert wrong_page.metrics == {"score": 0.0, "success": 0.0}


async def test_program_html_on_the_recorded_final_dom(judge: WebArenaJudge) -> None:
    try:
        passing = await judged(judge, 7, "done")
        assert passing.points == {f"program_html.{i}": 1.0 for i in range(1, 5)}, passing.evidence
        assert passing.evidence["program_html.2"].text == "Abishek,Vinta"
        failing = await judged(judge, 8, "done")
        assert failing.points == {"program_html.1": 0.0, "program_html.2": 0.0}
        assert failing.evidence["program_html.1"].text == "Developer"  # the first .role on the page
        assert failing.metrics["success"] == 0.0
    finally:
        await judge.aclose()


async def test_program_html_that_cannot_run_offline_is_said_so(judge: WebArenaJudge) -> None:
    from p2w_rt.replay.judges import JudgeError

    with pytest.raises(JudgeError, match="needs the live site: program_html reads .*/other/page, but the recorded"):
        await judged(judge, 9, "done")
    assert (await judged(judge, 10, "done")).points == {"program_html.1": 0.0}  # no GitLab member table recorded
    with pytest.raises(JudgeError, match="no WebArena config for task '99'"):
        await judged(judge, 99, "done")


async def test_missing_chromium_is_a_one_line_user_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from p2w_rt.replay.webarena import ChromiumNotFound, PageRenderer

    monkeypatch.setenv("P2W_CHROMIUM", "/nonexistent/chromium")
    renderer = PageRenderer()
    with pytest.raises(ChromiumNotFound, match="no such executable"):
        async with renderer.open("http://x.test/", "<html></html>"):
            pass
    await renderer.aclose()
