"""The ``webarena`` judge: WebArena's evaluators re-run offline on the recorded final state.

Scores multiply as in WebArena. What cannot be checked offline is said, not guessed: a
``program_html`` check on a page other than the recorded final one, or one calling WebArena's
live-site API helpers, makes the judgment ``failed`` with that reason.
"""

from __future__ import annotations

import os
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict

from p2w_runtime.llm import LlmBadResponse
from replay.judges._base import CallEstimate, Judge, JudgeContext, JudgeError, JudgeSettings, Verdict, content_hash
from replay.judges._prompts import FUZZY_SYSTEM, FUZZY_USER, UNACHIEVABLE_SYSTEM, UNACHIEVABLE_USER, template_hash
from replay.trajectory import Trajectory
from replay.webarena import (
    SITE_PLACEHOLDERS,
    HtmlCheck,
    Locate,
    PageRenderer,
    WebArenaConfigError,
    WebArenaTask,
    exact_match,
    load_tasks,
    must_include,
    substitute_sites,
    url_match,
)
from schemas import Evidence


class FuzzyVerdict(BaseModel):
    model_config = ConfigDict(extra="ignore")

    verdict: Literal["correct", "incorrect", "partially correct"]
    reason: str = ""


class SameReason(BaseModel):
    model_config = ConfigDict(extra="ignore")

    same_reason: bool
    reason: str = ""


class Unverifiable(JudgeError):
    """The check needs a page or a live-site API the recording does not hold."""


def default_site_urls() -> dict[str, str]:
    """WebArena's own convention: the base URL of each site in an environment variable (``GITLAB``, ``SHOPPING``...)."""
    names = [p.strip("_") for p in SITE_PLACEHOLDERS]
    return {name.lower(): os.environ[name] for name in names if os.environ.get(name)}


def reddit_post_url(url: str) -> str:
    """WebArena's ``reddit_get_post_url``: the post a comment URL (``/f/<forum>/<post>/...``) belongs to."""
    parts = urlsplit(url)
    path = parts.path.split("/")
    if len(path) < 4 or path[1] != "f":
        return url
    return f"{parts.scheme}://{parts.netloc}/f/{path[2]}/{path[3]}/"


def _same_page(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")


class WebArenaJudge(Judge):
    id = "webarena"
    version = "1"
    description = "WebArena's string_match / url_match / program_html checks on the recorded final state"

    def __init__(self, settings: JudgeSettings) -> None:
        super().__init__(settings)
        if not settings.webarena_configs:
            raise WebArenaConfigError("the webarena judge needs WebArena task configs (--webarena-config PATH)")
        self.tasks = load_tasks(settings.webarena_configs)
        self.site_urls = {**default_site_urls(), **settings.site_urls}
        self.renderer = PageRenderer()

    def config(self) -> dict[str, Any]:
        return {
            "model": self.settings.model,
            "prompt": template_hash(FUZZY_SYSTEM, FUZZY_USER, UNACHIEVABLE_SYSTEM, UNACHIEVABLE_USER),
            "params": self.settings.llm_params(),
            "site_urls": dict(sorted(self.site_urls.items())),
        }

    def task_for(self, t: Trajectory) -> WebArenaTask:
        task = self.tasks.get(t.task_id)
        if task is None:
            raise JudgeError(f"no WebArena config for task {t.task_id!r} in {self.settings.webarena_configs}")
        return task

    def config_hash(self, task_id: str) -> str:
        task = self.tasks.get(task_id)
        spec = task.eval.model_dump(mode="json") if task else None
        return content_hash({"judge": self.id, "config": self.config(), "eval": spec})

    def _fuzzy(self, t: Trajectory) -> Any:
        task = self.tasks.get(t.task_id)
        answers = task.eval.reference_answers if task and "string_match" in task.eval.eval_types else None
        return answers.fuzzy_match if answers else None

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

    async def judge(self, trajectory: Trajectory, ctx: JudgeContext) -> Verdict:
        task = self.task_for(trajectory)
        verdict = Verdict()
        try:
            for eval_type in task.eval.eval_types:
                if eval_type == "string_match":
                    await self._string_match(task, trajectory, ctx, verdict)
                elif eval_type == "url_match":
                    self._url_match(task, trajectory, verdict)
                else:
                    await self._program_html(task, trajectory, ctx, verdict)
        except LlmBadResponse as exc:
            return Verdict.failed(str(exc), cost_usd=ctx.llm.totals.cost_usd)
        score = 1.0
        for value in verdict.points.values():
            score *= value
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

    async def _string_match(self, task: WebArenaTask, t: Trajectory, ctx: JudgeContext, verdict: Verdict) -> None:
        answers = task.eval.reference_answers
        assert answers is not None  # validated by EvalSpec
        pred = self.answer(t)
        ids = [t.finished_event_id] if t.finished_event_id else []
        if answers.exact_match is not None:
            score = exact_match(answers.exact_match, pred)
            note = f"exact_match against {answers.exact_match!r}"
            verdict.award("string_match.exact_match", score, 1.0, Evidence(event_ids=ids, text=pred, note=note))
        for i, ref in enumerate(answers.must_include or [], 1):
            score = must_include(ref, pred, tokenize=len(answers.must_include or []) == 1)
            note = f"must_include {ref!r}"
            verdict.award(f"string_match.must_include.{i}", score, 1.0, Evidence(event_ids=ids, text=pred, note=note))
        if answers.fuzzy_match == "N/A":
            score, note = await self._unachievable(task, pred, ctx)
            verdict.award("string_match.fuzzy_match", score, 1.0, Evidence(event_ids=ids, text=pred, note=note))
        else:
            for i, ref in enumerate(answers.fuzzy_match or [], 1):
                score, note = await self._fuzzy_match(task, ref, pred, ctx)
                verdict.award(
                    f"string_match.fuzzy_match.{i}", score, 1.0, Evidence(event_ids=ids, text=pred, note=note)
                )

    async def _fuzzy_match(self, task: WebArenaTask, ref: str, pred: str, ctx: JudgeContext) -> tuple[float, str]:
        if not pred:
            return (1.0 if not ref else 0.0), f"fuzzy_match {ref!r}: empty answer"
        messages = [
            {"role": "system", "content": FUZZY_SYSTEM},
            {"role": "user", "content": FUZZY_USER.format(intent=task.intent, reference=ref, answer=pred)},
        ]
        graded = await self._llm(ctx).complete_json("judge", messages, FuzzyVerdict, params=self.settings.llm_params())
        return float(graded.verdict == "correct"), f"fuzzy_match {ref!r}: {graded.verdict} ({graded.reason})"

    async def _unachievable(self, task: WebArenaTask, pred: str, ctx: JudgeContext) -> tuple[float, str]:
        if exact_match("N/A", pred) == 1.0:
            return 1.0, "fuzzy_match N/A: answered N/A"
        reference = task.eval.string_note or ""
        messages = [
            {"role": "system", "content": UNACHIEVABLE_SYSTEM},
            {"role": "user", "content": UNACHIEVABLE_USER.format(intent=task.intent, reference=reference, answer=pred)},
        ]
        graded = await self._llm(ctx).complete_json("judge", messages, SameReason, params=self.settings.llm_params())
        return float(
            graded.same_reason
        ), f"fuzzy_match N/A: unachievable reason {'matches' if graded.same_reason else 'differs'} ({graded.reason})"

    def _llm(self, ctx: JudgeContext) -> Any:
        if ctx.llm is None:
            raise JudgeError("fuzzy_match needs an LLM judge (--model / --base-url)")
        return ctx.llm

    # -- url_match ------------------------------------------------------------------------

    def _url_match(self, task: WebArenaTask, t: Trajectory, verdict: Verdict) -> None:
        reference = substitute_sites(task.eval.reference_url or "", self.site_urls)
        final = t.last_url or ""
        score, why = url_match(reference, final)
        ids = [t.final_state.event_id] if t.final_state else ([t.finished_event_id] if t.finished_event_id else [])
        verdict.award("url_match", score, 1.0, Evidence(event_ids=ids, text=final, note=why))

    # -- program_html ---------------------------------------------------------------------

    def _target_url(self, check: HtmlCheck, final_url: str) -> str:
        target = check.url
        if target == "last":
            return final_url
        if target.startswith("func:"):
            call = target.removeprefix("func:").replace("__last_url__", final_url)
            if call.startswith("reddit_get_post_url(") and call.endswith(")"):
                return reddit_post_url(call[len("reddit_get_post_url(") : -1].strip("'\" "))
            raise Unverifiable(f"program_html target {target!r} calls a live-site API; it cannot run offline")
        return substitute_sites(target, self.site_urls)

    async def _program_html(self, task: WebArenaTask, t: Trajectory, ctx: JudgeContext, verdict: Verdict) -> None:
        state = t.final_state
        if state is None or state.dom_html is None:
            raise Unverifiable(f"episode {t.stream} recorded no final DOM; program_html cannot be checked")
        for check in task.eval.program_html:
            target = self._target_url(check, state.url)
            if not _same_page(target, state.url):
                raise Unverifiable(
                    f"program_html needs the page {target}, but only the final page {state.url} was recorded"
                )
            if check.locator.startswith("func:"):
                raise Unverifiable(f"program_html locator {check.locator[:60]!r} calls a live-site API")
        dom = (await ctx.get_blob(state.dom_html)).decode("utf-8", errors="replace")
        locates = [Locate(c.locator, tuple(c.prep_actions)) for c in task.eval.program_html]
        selected = await self.renderer.evaluate(state.url, dom, locates)
        for i, (check, text) in enumerate(zip(task.eval.program_html, selected, strict=True), 1):
            score, note = _required(check, text)
            shown = text if len(text) <= 300 else text[:299] + "…"
            verdict.award(f"program_html.{i}", score, 1.0, Evidence(event_ids=[state.event_id], text=shown, note=note))

    async def aclose(self) -> None:
        await self.renderer.aclose()


def _required(check: HtmlCheck, selected: str) -> tuple[float, str]:
    contents = check.required_contents
    where = f"locator {check.locator[:80]!r}" if check.locator.strip() else "whole page"
    if contents.exact_match is not None:
        return exact_match(contents.exact_match, selected), f"{where}: exact_match {contents.exact_match!r}"
    missing = [
        content
        for content in contents.must_include or []
        if not any(must_include(alt, selected) for alt in content.split(" |OR| "))
    ]
    if missing:
        return 0.0, f"{where}: missing {missing!r}"
    return 1.0, f"{where}: includes {contents.must_include!r}"
