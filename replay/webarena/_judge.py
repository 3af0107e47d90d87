"""The ``webarena`` judge: WebArena's evaluators re-run offline on the recorded final state.

Scores follow ``evaluation_harness/evaluators.py`` rule for rule (``docs/design/webarena-parity.md``
pins each rule to a test). What cannot be checked offline is said, never scored as 0: a
``program_html`` check on a page other than the recorded final one, or one calling WebArena's
live-site API helpers, makes the judgment ``failed`` with "needs the live site" and the reason.
"""

from __future__ import annotations

import html
import json
import os
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, JsonValue

from p2w_rt.replay.derived import PassSettings, StructuredLlm
from p2w_rt.replay.judges import (
    CallEstimate,
    Judge,
    JudgeContext,
    JudgeError,
    LlmConfig,
    Scorecard,
    llm_fields,
    template_hash,
)
from p2w_rt.replay.webarena._checks import clean_answer, exact_match, must_include, url_match
from p2w_rt.replay.webarena._config import SITE_PLACEHOLDERS, HtmlCheck, WebArenaConfigError, WebArenaTask, load_tasks
from p2w_rt.replay.webarena._helpers import (
    LIVE_SITE_HELPERS,
    NeedsLiveSite,
    locate_with_helper,
    parse_call,
    shows,
    target_url,
)
from p2w_rt.replay.webarena._page import PageRenderer
from p2w_rt.replay.webarena._prompts import FUZZY_SYSTEM, FUZZY_USER, UNACHIEVABLE_SYSTEM, UNACHIEVABLE_USER
from p2w_rt.replay.webarena._settings import WebArenaSettings
from p2w_rt.schemas import Evidence
from p2w_runtime.domain.trajectory import FinalStateRecord, Trajectory
from p2w_runtime.llm import LlmBadResponse


class FuzzyVerdict(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    verdict: Literal["correct", "incorrect", "partially correct"]
    reason: str = ""


class SameReason(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    same_reason: bool
    reason: str = ""


class Unverifiable(JudgeError):
    """The check needs a page or a live-site API the recording does not hold."""


def default_site_urls() -> dict[str, str]:
    """WebArena's own convention: the base URL of each site in an environment variable (``GITLAB``, ``SHOPPING``...)."""
    names = [p.strip("_") for p in SITE_PLACEHOLDERS]
    return {name.lower(): os.environ[name] for name in names if os.environ.get(name)}


class WebArenaConfig(LlmConfig):
    """The fuzzy-match model and prompts, and the site URLs the task configs' placeholders are filled with."""

    site_urls: dict[str, str]


class WebArenaJudge(Judge[WebArenaConfig]):
    id = "webarena"
    version = "3"
    description = "WebArena's string_match / url_match / program_html checks on the recorded final state"

    def __init__(self, settings: PassSettings) -> None:
        super().__init__(settings)
        configs = settings.of(WebArenaSettings).configs
        if not configs:
            raise WebArenaConfigError("the webarena judge needs WebArena task configs (--webarena-config PATH)")
        self.source = configs
        self.tasks = load_tasks(configs, self.config.site_urls)
        self.renderer = PageRenderer()

    def configure(self, settings: PassSettings) -> WebArenaConfig:
        prompt = template_hash(FUZZY_SYSTEM, FUZZY_USER, UNACHIEVABLE_SYSTEM, UNACHIEVABLE_USER)
        given = settings.of(WebArenaSettings).site_urls
        site_urls = dict(sorted({**default_site_urls(), **given}.items()))
        return WebArenaConfig.model_validate({**llm_fields(settings, prompt), "site_urls": site_urls})

    def task_for(self, t: Trajectory) -> WebArenaTask:
        task = self.tasks.get(t.task_id)
        if task is None:
            raise JudgeError(f"no WebArena config for task {t.task_id!r} in {self.source}")
        return task

    def task_config(self, task_id: str) -> dict[str, JsonValue]:
        """The task's eval block: a changed reference answer or check is a new key."""
        task = self.tasks.get(task_id)
        return {"eval": task.eval.model_dump(mode="json") if task else None}

    def _fuzzy(self, t: Trajectory) -> Any:
        task = self.tasks.get(t.task_id)
        return task.eval.answers.get("fuzzy_match") if task else None

    def needs_llm(self, trajectory: Trajectory) -> bool:
        return self._fuzzy(trajectory) is not None

    def needs_io(self, trajectory: Trajectory) -> bool:
        return True

    def estimate(self, trajectory: Trajectory) -> CallEstimate:
        fuzzy = self._fuzzy(trajectory)
        if fuzzy is None:
            return CallEstimate()
        calls = 1 if fuzzy == "N/A" else len(fuzzy)
        prompt = (len(FUZZY_SYSTEM) + len(trajectory.query) + len(trajectory.answer or "") + 200) // 4
        return CallEstimate(calls, calls * prompt, calls * 40)

    async def judge(self, trajectory: Trajectory, ctx: JudgeContext) -> Scorecard:
        task = self.task_for(trajectory)
        verdict = Scorecard()
        self._offline_or_raise(task, trajectory)  # before any LLM call is paid for
        score = 1.0
        try:
            for eval_type in task.eval.eval_types:  # EvaluatorComb: the evaluators' scores multiply
                if eval_type == "string_match":
                    score *= await self._string_match(task, trajectory, ctx, verdict)
                elif eval_type == "url_match":
                    score *= self._url_match(task, trajectory, verdict)
                else:
                    score *= await self._program_html(task, trajectory, ctx, verdict)
        except LlmBadResponse as exc:
            return Scorecard.failed(str(exc), cost_usd=ctx.llm.totals.cost_usd if ctx.llm is not None else None)
        except NeedsLiveSite as exc:
            raise Unverifiable(f"needs the live site: {exc}") from None
        verdict.metrics = {"score": score, "success": float(score == 1.0)}
        verdict.cost_usd = ctx.llm.totals.cost_usd if ctx.llm is not None else None
        return verdict

    # -- string_match -------------------------------------------------------------------

    @staticmethod
    def answer(t: Trajectory) -> str:
        if t.answer is not None:
            return t.answer
        final = t.final_action
        if final is not None and final.name == "stop" and final.parsed and final.parsed.args:
            return final.parsed.args[0]
        return ""

    async def _string_match(self, task: WebArenaTask, t: Trajectory, ctx: JudgeContext, verdict: Scorecard) -> float:
        """``StringEvaluator``: the answer is cleaned once here and again inside each check, as in WebArena."""
        raw = self.answer(t)
        pred = clean_answer(raw)
        ids = [t.finished_event_id] if t.finished_event_id else []

        def award(key: str, score: float, note: str) -> None:
            verdict.award(key, score, 1.0, Evidence(event_ids=ids, text=raw, note=note))

        score = 1.0
        for kind, refs in task.eval.answers.items():
            if kind == "exact_match":
                item = exact_match(refs, pred)
                award("string_match.exact_match", item, f"exact_match against {refs!r}")
                score *= item
            elif kind == "must_include":
                for i, ref in enumerate(refs, 1):
                    item = must_include(ref, pred, tokenize=len(refs) == 1)
                    award(f"string_match.must_include.{i}", item, f"must_include {ref!r}")
                    score *= item
            elif kind == "fuzzy_match" and refs == "N/A":
                score *= exact_match("N/A", pred)
                note = "fuzzy_match N/A: answered N/A"
                if score != 1:  # WebArena overwrites the score so far with the unachievable-reason verdict
                    score, note = await self._unachievable(task, pred, ctx)
                award("string_match.fuzzy_match", score, note)
            elif kind == "fuzzy_match":
                for i, ref in enumerate(refs, 1):
                    item, note = await self._fuzzy_match(task, ref, pred, ctx)
                    award(f"string_match.fuzzy_match.{i}", item, note)
                    score *= item
        return score

    async def _fuzzy_match(self, task: WebArenaTask, ref: str, pred: str, ctx: JudgeContext) -> tuple[float, str]:
        if not pred:
            return (1.0 if not ref else 0.0), f"fuzzy_match {ref!r}: empty answer"
        messages = [
            {"role": "system", "content": FUZZY_SYSTEM},
            {"role": "user", "content": FUZZY_USER.format(intent=task.intent, reference=ref, answer=pred)},
        ]
        graded = await self._llm(ctx).complete_json("judge", messages, FuzzyVerdict, params=self.config.params)
        return float(graded.verdict == "correct"), f"fuzzy_match {ref!r}: {graded.verdict} ({graded.reason})"

    async def _unachievable(self, task: WebArenaTask, pred: str, ctx: JudgeContext) -> tuple[float, str]:
        messages = [
            {"role": "system", "content": UNACHIEVABLE_SYSTEM},
            {
                "role": "user",
                "content": UNACHIEVABLE_USER.format(intent=task.intent, reference=task.eval.string_note, answer=pred),
            },
        ]
        graded = await self._llm(ctx).complete_json("judge", messages, SameReason, params=self.config.params)
        same = "matches" if graded.same_reason else "differs"
        return float(graded.same_reason), f"fuzzy_match N/A: unachievable reason {same} ({graded.reason})"

    def _llm(self, ctx: JudgeContext) -> StructuredLlm:
        if ctx.llm is None:
            raise JudgeError("fuzzy_match needs an LLM judge (--model / --base-url)")
        return ctx.llm

    # -- url_match ------------------------------------------------------------------------

    def _url_match(self, task: WebArenaTask, t: Trajectory, verdict: Scorecard) -> float:
        final = t.last_url or ""
        score, why = url_match(task.eval.reference_url or "", final)
        ids = [t.final_state.event_id] if t.final_state else ([t.finished_event_id] if t.finished_event_id else [])
        verdict.award("url_match", score, 1.0, Evidence(event_ids=ids, text=final, note=why))
        return score

    # -- program_html ---------------------------------------------------------------------

    def _offline_or_raise(self, task: WebArenaTask, t: Trajectory) -> None:
        """Every program_html check must read the recorded final page with offline helpers; else not scored."""
        if not task.eval.checks:
            return
        state = t.final_state
        if state is None or state.dom_html is None:
            raise Unverifiable(f"episode {t.stream} recorded no final DOM; program_html cannot be checked")
        try:
            for check in task.eval.checks:
                target = target_url(check.url, state.url)
                if target != "last" and not shows(state.url, target):
                    raise NeedsLiveSite(f"program_html reads {target}, but the recorded final page is {state.url}")
                if check.locator.startswith("func:") and parse_call(check.locator[5:]).name in LIVE_SITE_HELPERS:
                    raise NeedsLiveSite(f"program_html locator {check.locator[:80]!r} asks the site's API")
        except NeedsLiveSite as exc:
            raise Unverifiable(f"needs the live site: {exc}") from None

    async def _program_html(self, task: WebArenaTask, t: Trajectory, ctx: JudgeContext, verdict: Scorecard) -> float:
        """``HTMLContentEvaluator`` on the recorded final page; a check with a URL reloads it, as WebArena's goto."""
        state = t.final_state
        assert state is not None and state.dom_html is not None  # _offline_or_raise
        dom = (await ctx.get_blob(state.dom_html)).decode("utf-8", errors="replace")
        css = await recorded_stylesheets(state, ctx)
        score = 1.0
        async with self.renderer.open(state.url, dom, css) as page:
            for i, check in enumerate(task.eval.checks, 1):
                if target_url(check.url, page.url) != "last":
                    await page.reload()
                if not check.locator.strip():
                    selected = await page.content()
                elif check.locator.startswith("func:"):
                    selected = await locate_with_helper(check.locator, page)
                else:
                    selected = await page.locate(check.locator, check.prep_actions)
                selected = html.unescape(selected)
                item, note = _required(check, selected)
                shown = selected if len(selected) <= 300 else selected[:299] + "…"
                verdict.award(
                    f"program_html.{i}", item, 1.0, Evidence(event_ids=[state.event_id], text=shown, note=note)
                )
                score *= item
        return score

    async def aclose(self) -> None:
        await self.renderer.aclose()


async def recorded_stylesheets(state: FinalStateRecord, ctx: JudgeContext) -> dict[str, str]:
    """The final page's recorded CSS by URL; none for a recording made before stylesheets were kept."""
    if state.stylesheets is None:
        return {}
    try:
        sheets = json.loads(await ctx.get_blob(state.stylesheets))
    except ValueError:
        raise JudgeError(f"final_state {state.event_id}: stylesheets blob is not JSON") from None
    return {str(url): str(css) for url, css in sheets.items()} if isinstance(sheets, dict) else {}


def _required(check: HtmlCheck, selected: str) -> tuple[float, str]:
    contents = check.required_contents
    where = f"locator {check.locator[:80]!r}" if check.locator.strip() else "whole page"
    if contents.exact_match is not None:  # WebArena looks at exact_match first
        return exact_match(contents.exact_match, selected), f"{where}: exact_match {contents.exact_match!r}"
    missing = [
        content
        for content in contents.must_include or []
        if not any(must_include(alt, selected) for alt in content.split(" |OR| "))
    ]
    if missing:
        return 0.0, f"{where}: missing {missing!r}"
    return 1.0, f"{where}: includes {contents.must_include!r}"
