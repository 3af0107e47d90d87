"""Cases written from WebArena's ``evaluation_harness/evaluators.py`` and ``helper_functions.py``.

Each case is (eval block, answer / final page) -> the score WebArena's evaluator gives, read off
the reference code; real configs from ``test.raw.json`` wherever one exercises the rule.
``docs/design/webarena-parity.md`` maps every rule of the reference to its case here.
program_html runs in real headless Chromium on the recorded DOM.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from p2w_rt.replay.derived import PassSettings
from p2w_rt.replay.judges import JudgeError
from p2w_rt.replay.webarena import (
    PageRenderer,
    WebArenaJudge,
    WebArenaSettings,
    clean_answer,
    load_tasks,
    resolve_dot_segments,
)
from p2w_runtime.llm import LlmClient, RetryPolicy
from p2w_runtime.testing import ScriptedLlm
from tests.helpers.webarena_support import REAL, SITES, judged

MakeJudge = Callable[..., WebArenaJudge]
GITLAB, REDDIT, ADMIN = SITES["gitlab"], SITES["reddit"], SITES["shopping_admin"]


module_loop = pytest.mark.asyncio(loop_scope="module")
"""Async tests share the module's event loop, so they share one Chromium."""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def renderer() -> AsyncIterator[PageRenderer]:
    """One Chromium for the module: each recorded page still gets a fresh context."""
    renderer = PageRenderer()
    yield renderer
    await renderer.aclose()


@pytest_asyncio.fixture(loop_scope="module")
async def real_judge(renderer: PageRenderer) -> WebArenaJudge:
    judge = WebArenaJudge(PassSettings(plugins=(WebArenaSettings(configs=str(REAL), site_urls=SITES),)))
    judge.renderer = renderer
    return judge


@pytest_asyncio.fixture(loop_scope="module")
async def own_judge(tmp_path: Path, renderer: PageRenderer) -> MakeJudge:
    """A judge over eval blocks written here (task ids 1, 2, ...)."""
    count = 0

    def make(*evals: dict[str, Any]) -> WebArenaJudge:
        nonlocal count
        count += 1
        path = tmp_path / f"configs{count}.json"
        path.write_text(json.dumps([{"task_id": i, "intent": "q", "eval": e} for i, e in enumerate(evals, 1)]))
        judge = WebArenaJudge(PassSettings(plugins=(WebArenaSettings(configs=str(path), site_urls=SITES),)))
        judge.renderer = renderer
        return judge

    return make


# -- StringEvaluator ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "cleaned"),
    [
        ("  'Quoted'  ", "quoted"),
        ('"Quoted"', "quoted"),
        ("'", ""),  # startswith and endswith the same lone quote: [1:-1] of one character
        ('"', ""),
        ("'mixed\"", "'mixed\""),
        ("\"'both'\"", "'both'"),  # one pair only
    ],
)
def test_clean_answer(raw: str, cleaned: str) -> None:
    assert clean_answer(raw) == cleaned


@pytest.mark.parametrize(
    ("task_id", "answer", "score"),
    [
        (0, "Quest Lumaflex™ Band", 1.0),
        (0, "  quest lumaflex™ band ", 1.0),
        (0, "\"'Quest Lumaflex™ Band'\"", 1.0),  # the answer is cleaned twice: both quote pairs go
        (0, "Quest Lumaflex Band", 0.0),
        (14, "0", 1.0),  # single must_include, one character: whole NLTK token
        (14, "There are 0 of them.", 1.0),
        (14, "10", 0.0),
        (14, "0/5", 0.0),
        (14, "'0'", 1.0),
        (11, "6", 1.0),
        (11, "I found 16 reviews", 0.0),
        (78, "There are 346 orders", 1.0),  # more than one character: substring
        (78, "1346", 1.0),
        (36, "Yes, it is", 1.0),
        (36, "yesterday", 1.0),  # "yes" is three characters: plain substring, as in WebArena
    ],
)
@module_loop
async def test_string_match_on_real_configs(real_judge: WebArenaJudge, task_id: int, answer: str, score: float) -> None:
    verdict = await judged(real_judge, task_id, answer)
    assert verdict.metrics["score"] == score, verdict.evidence


@module_loop
async def test_no_answer_is_the_empty_string(real_judge: WebArenaJudge) -> None:
    verdict = await judged(real_judge, 14, None)
    assert verdict.metrics["score"] == 0.0 and verdict.points == {"string_match.must_include.1": 0.0}


@module_loop
async def test_several_must_include_multiply_and_use_substrings(own_judge: MakeJudge) -> None:
    judge = own_judge({"eval_types": ["string_match"], "reference_answers": {"must_include": ["4", "Kent"]}})
    assert (await judged(judge, 1, "Kent, 40 miles")).metrics["score"] == 1.0  # "4" in "40": no tokenizing
    points = (await judged(judge, 1, "Kent")).points
    assert points == {"string_match.must_include.1": 0.0, "string_match.must_include.2": 1.0}


@module_loop
async def test_unknown_reference_kinds_are_ignored_and_empty_references_score_one(own_judge: MakeJudge) -> None:
    judge = own_judge(
        {"eval_types": ["string_match"], "reference_answers": {"regex": "x+", "exact_match": "ok"}},
        {"eval_types": ["string_match"], "reference_answers": {}},
    )
    assert (await judged(judge, 1, "OK")).metrics["score"] == 1.0
    assert (await judged(judge, 2, "anything")).metrics["score"] == 1.0


@module_loop
async def test_fuzzy_na_overwrites_the_score_so_far(own_judge: MakeJudge, scripted_llm: ScriptedLlm) -> None:
    """``if score != 1: score = 1.0 * ua_match(...)``: an earlier failing check is overwritten, not multiplied."""
    judge = own_judge(
        {
            "eval_types": ["string_match"],
            "reference_answers": {"must_include": ["refund"], "fuzzy_match": "N/A"},
            "string_note": "the order does not exist",
        },
    )
    scripted_llm.script(json.dumps({"same_reason": True, "reason": "same"}))
    llm = LlmClient("gpt-5-mini", base_url=scripted_llm.base_url, api_key="k", retry=RetryPolicy(max_retries=0))
    try:
        verdict = await judged(judge, 1, "N/A", llm=llm)
    finally:
        await llm.aclose()
    assert verdict.points["string_match.must_include.1"] == 0.0
    assert verdict.metrics["score"] == 1.0
    request = scripted_llm.chat_requests[0]["messages"][1]["content"]
    assert "the order does not exist" in request and "n/a" in request  # the cleaned (lowercased) answer


@module_loop
async def test_fuzzy_match_with_an_empty_answer_needs_no_llm(own_judge: MakeJudge) -> None:
    judge = own_judge({"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": ["April"]}})
    assert (await judged(judge, 1, "  ''  ")).metrics["score"] == 0.0  # cleaned to "": 0 without a call


# -- URLEvaluator: tests/replay/test_webarena_url_match.py ------------------------------------


# -- HTMLContentEvaluator ------------------------------------------------------------------

MEMBERS = """<html><body><table>
<tr><td data-label="Account"><span class="gl-avatar-labeled-sublabel">@byteblaze</span></td>
    <td class="col-max-role"><span>Developer</span></td></tr>
<tr><td data-label="Account"><span class="gl-avatar-labeled-sublabel">@abisubramanya27</span></td>
    <td class="col-max-role"><span>{role}</span></td></tr>
</table></body></html>"""


@pytest.mark.parametrize(("role", "score"), [("Guest", 1.0), ("Developer", 0.0)])
@module_loop
async def test_gitlab_member_role_helper_reads_the_recorded_members_page(
    real_judge: WebArenaJudge, role: str, score: float
) -> None:
    url = f"{GITLAB}/byteblaze/dotfiles/-/project_members"
    verdict = await judged(real_judge, 481, "done", url=url, page=MEMBERS.format(role=role))
    assert verdict.metrics["score"] == score and verdict.evidence["program_html.1"].text == role


@module_loop
async def test_member_role_of_an_unlisted_account_is_empty(own_judge: MakeJudge) -> None:
    check = {"url": "last", "locator": "func:gitlab_get_project_memeber_role(__page__, 'nobody')"}
    judge = own_judge({"eval_types": ["program_html"], "program_html": [
        {**check, "required_contents": {"exact_match": ""}}]})  # fmt: skip
    verdict = await judged(judge, 1, "done", page=MEMBERS.format(role="Guest"))
    assert verdict.metrics["score"] == 1.0 and verdict.evidence["program_html.1"].text == ""


POST = (
    "<html><body><div class='submission__inner'>"
    "<h1>What is the recommended console to buy these days</h1></div></body></html>"
)


@module_loop
async def test_reddit_post_helper_runs_when_the_agent_ended_on_the_post(real_judge: WebArenaJudge) -> None:
    post = f"{REDDIT}/f/consoles/133/what-is-the-recommended-console-to-buy-these-days"
    verdict = await judged(real_judge, 600, "done", url=post, page=POST)
    assert verdict.points == {"url_match": 1.0, "program_html.1": 1.0}
    assert (await judged(real_judge, 600, "done", url=f"{REDDIT}/f/consoles/133/", page=POST)).metrics["score"] == 1.0
    comment = f"{REDDIT}/f/consoles/133/-/comment/9"  # the post page is another page: not recorded
    with pytest.raises(JudgeError, match=r"needs the live site: program_html reads .*/f/consoles/133/, but"):
        await judged(real_judge, 600, "done", url=comment, page=POST)


@module_loop
async def test_api_helpers_need_the_live_site_and_are_not_scored(real_judge: WebArenaJudge) -> None:
    with pytest.raises(JudgeError, match="needs the live site: program_html url 'func:shopping_get_latest_order_url"):
        await judged(real_judge, 436, "done", url=f"{SITES['shopping']}/sales/order/view/order_id/180/")


@module_loop
async def test_placeholders_are_replaced_in_required_contents(real_judge: WebArenaJudge) -> None:
    """Task 552's must_include items are ``__REDDIT__/f/space/...`` URLs, to be found on a GitLab raw page."""
    task = load_tasks(REAL, SITES)["552"]
    wanted = task.eval.checks[0].required_contents.must_include
    assert wanted and all(item.startswith(f"{REDDIT}/f/space/") for item in wanted)
    raw = f"{GITLAB}/byteblaze/gimmiethat.space/-/raw/main/real_space/urls.txt"
    page = "<html><body><pre>" + "\n".join(wanted) + "</pre></body></html>"
    assert (await judged(real_judge, 552, "done", url=raw, page=page)).metrics["score"] == 1.0
    half = "<html><body><pre>" + "\n".join(wanted[:3]) + "</pre></body></html>"
    assert (await judged(real_judge, 552, "done", url=raw, page=half)).metrics["score"] == 0.0


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:7780/admin/../antonia-racer-tank.html",  # tasks 464, 543-546
        "http://127.0.0.1:7780/admin/./x.html",
        "http://127.0.0.1:7780/../../x.html",  # ".." at the root stays at the root
        "http://127.0.0.1:7780/a/b/..",  # a final ".." leaves the slash
        "http://127.0.0.1:7780/a/b/.",
        "http://127.0.0.1:7780/a/%2e%2e/x",  # percent-encoded dots are dots
        "http://127.0.0.1:7780/a/.%2E/x",
        "http://127.0.0.1:7780/a/%2e/x",
        "http://127.0.0.1:7780/a/..x/y",  # not a dot segment
        "http://127.0.0.1:7780/a/...//x",
        "http://127.0.0.1:7780/a//../x",  # ".." removes the empty segment
        "http://127.0.0.1:7780/a/b/..?q=1",
        "http://127.0.0.1:7780/a/b/../?q=../x#f/../g",  # query and fragment as written
        "http://127.0.0.1:7780",
    ],
)
@module_loop
async def test_dot_segments_resolve_as_chromium_loads_them(renderer: PageRenderer, url: str) -> None:
    async with renderer.open(url, "<html></html>") as page:
        loaded = await page.evaluate("document.URL")
    assert resolve_dot_segments(url) in {loaded, loaded.rstrip("/")}  # Chromium writes "http://h" as "http://h/"


PRODUCT = """<html><body><div class="product attribute overview"><div itemprop="description">{quotes}</div></div>
<div class="data item content">Details</div></body></html>"""


@pytest.mark.parametrize(
    ("task_id", "slug"),
    [(464, "antonia-racer-tank"), (543, "bella-tank"), (544, "selene-yoga-hoodie"), (545, "radiant-tee"),
     (546, "affirm-water-bottle")],
)  # fmt: skip
@module_loop
async def test_dot_segment_targets_are_scored_on_the_page_the_browser_loads(
    real_judge: WebArenaJudge, task_id: int, slug: str
) -> None:
    """``__SHOPPING_ADMIN__/../<slug>.html`` is ``page.goto``-ed to ``http://host:7780/<slug>.html``."""
    check = real_judge.tasks[str(task_id)].eval.checks[0]
    assert check.url == f"{ADMIN}/../{slug}.html"
    product = f"http://admin.test:7780/{slug}.html"
    quotes = check.required_contents.must_include or []
    verdict = await judged(real_judge, task_id, "done", url=product, page=PRODUCT.format(quotes=" ".join(quotes)))
    assert verdict.metrics["score"] == 1.0, verdict.evidence
    verdict = await judged(real_judge, task_id, "done", url=product, page=PRODUCT.format(quotes=" ".join(quotes[:-1])))
    assert verdict.metrics["score"] == 0.0 and "missing" in (verdict.evidence["program_html.1"].note or "")
    with pytest.raises(JudgeError, match=f"needs the live site: program_html reads {product}, but the recorded"):
        await judged(real_judge, task_id, "done", url=f"{ADMIN}/catalog/product/edit/id/1/")


PROMO = """<html><body><input name="name" value="Spring Sale 20">
<select name="website_ids"><option selected>Main Website</option><option>Other</option></select>
<select name="customer_group_ids"><option>NOT LOGGED IN</option><option selected>General</option></select>
<div data-index="actions"><div class="admin__collapsible-title">Actions</div>
<select name="simple_action"><option value="by_fixed">Fixed</option>
  <option value="by_percent" selected>Percent</option></select>
<input name="discount_amount" value="{amount}"></div></body></html>"""


@pytest.mark.parametrize(("amount", "score"), [("20", 1.0), ("20.5", 0.0)])
@module_loop
async def test_real_form_checks_with_prep_actions_and_numbers(
    real_judge: WebArenaJudge, amount: str, score: float
) -> None:
    """Task 699: ``.selectedIndex`` is a JS number, scored through Python's ``str()`` ("0", not "0.0")."""
    url = f"{ADMIN}/sales_rule/promo_quote/new/"
    verdict = await judged(real_judge, 699, "done", url=url, page=PROMO.format(amount=amount))
    assert verdict.evidence["program_html.2"].text == "0" and verdict.evidence["program_html.3"].text == "1"
    assert verdict.metrics["score"] == score, verdict.evidence


FORM = (
    "<html><body><input id='note' value='draft'><p id='t'>Fish &amp;amp; chips</p>"
    "<a title='secret-attr'>x</a></body></html>"
)
FINAL = f"{GITLAB}/form"


def html_eval(*checks: dict[str, Any]) -> dict[str, Any]:
    return {"eval_types": ["program_html"], "program_html": list(checks)}


def check(locator: str, contents: dict[str, Any], prep: list[str] | None = None, url: str = "last") -> dict:
    return {"url": url, "locator": locator, "required_contents": contents, **({"prep_actions": prep} if prep else {})}


NOTE = "document.querySelector('#note').value"


@pytest.mark.parametrize(
    ("html_check", "selected", "score"),
    [
        # WebArena stops preparing at the first failing prep action
        (
            check(NOTE, {"exact_match": "draft"}, ["document.querySelector('#x').click()", f"{NOTE} = 'sent'"]),
            "draft",
            1.0,
        ),
        # with both kinds, exact_match is the one checked
        (check(NOTE, {"exact_match": "draft", "must_include": ["nothing"]}), "draft", 1.0),
        # the selection is HTML-unescaped once: "&amp;amp;" in the source is "&amp;" as text, "&" after unescape
        (check("document.querySelector('#t').outerText", {"exact_match": "fish & chips"}), "Fish & chips", 1.0),
        # a locator that throws selects ""
        (check("document.querySelector('#x').outerText", {"exact_match": ""}), "", 1.0),
        # the empty locator is page.content(): the HTML source, attributes included
        (check("", {"must_include": ["SECRET-ATTR |OR| nowhere", 'value="draft"']}), None, 1.0),
        # JS values go through Python's str()
        (check("[...document.querySelectorAll('input')].length > 0", {"exact_match": "true"}), "True", 1.0),
        (check("document.querySelector('#note').getAttribute('x')", {"exact_match": "none"}), "None", 1.0),
    ],
)
@module_loop
async def test_program_html_rules(
    own_judge: MakeJudge, html_check: dict[str, Any], selected: str | None, score: float
) -> None:
    verdict = await judged(own_judge(html_eval(html_check)), 1, "done", url=FINAL, page=FORM)
    if selected is not None:
        assert verdict.evidence["program_html.1"].text == selected
    assert verdict.metrics["score"] == score, verdict.evidence


@module_loop
async def test_a_check_with_a_url_reloads_the_page_undoing_earlier_prep_actions(own_judge: MakeJudge) -> None:
    """WebArena's ``page.goto(url)`` reloads: a prep action's change is gone for the next check; "last" keeps it."""
    value = "document.querySelector('#note').value"
    prep = ["document.querySelector('#note').value = 'sent'"]
    judge = own_judge(
        html_eval(
            {"url": "last", "locator": value, "prep_actions": prep, "required_contents": {"exact_match": "sent"}},
            {"url": "last", "locator": value, "required_contents": {"exact_match": "sent"}},
            {"url": "__GITLAB__/form/", "locator": value, "required_contents": {"exact_match": "draft"}},
        ),
    )
    verdict = await judged(judge, 1, "done", url=FINAL, page=FORM)
    assert verdict.points == {"program_html.1": 1.0, "program_html.2": 1.0, "program_html.3": 1.0}, verdict.evidence


@module_loop
async def test_scores_multiply_across_evaluators(real_judge: WebArenaJudge) -> None:
    verdict = await judged(real_judge, 600, "done", url=f"{REDDIT}/f/consoles/133/other", page="<html></html>")
    assert verdict.points == {"url_match": 1.0, "program_html.1": 0.0}
    assert verdict.metrics == {"score": 0.0, "success": 0.0}
