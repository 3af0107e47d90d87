"""The LLM judges: the appendix-E rubric over the full trajectory, and the two baselines' views.

The model returns one scored criterion per rubric line, in a JSON schema built for the
episode (one field per expected preference), so a wrong number of preferences is a
malformed answer rather than a silent misalignment. Normalized metrics and SR are computed
by rule from the points, never taken from the model.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from p2w_rt.replay.derived import PassSettings
from p2w_rt.replay.judges import CallEstimate, Judge, JudgeContext, Scorecard, llm_fields, template_hash
from p2w_rt.replay.persona2web._prompts import ACTION_WISE_SYSTEM, OUTCOME_SYSTEM, RUBRIC_SYSTEM, USER_TEMPLATE
from p2w_rt.replay.persona2web._render import Rendered, render_actions, render_full, render_outcome
from p2w_rt.replay.persona2web._sites import LlmSiteConfig, site_fields
from p2w_rt.replay.persona2web._targets import (
    INTENT_POINTS,
    PREF_POINTS,
    WEB_POINTS,
    RubricTargets,
    rubric_metrics,
    rubric_targets,
)
from p2w_rt.schemas import Evidence
from p2w_runtime.domain.trajectory import Trajectory
from p2w_runtime.llm import LlmBadResponse

COMPLETION_TOKENS_PER_CRITERION = 60
"""Rough size of one scored criterion in the answer, for ``--dry-run`` estimates."""


class _Criterion(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    evidence: list[str] = Field(default_factory=list, description="[E<n>] tags of the events behind the score")
    justification: str = Field(description="One or two sentences: why this score")


class WebCriterion(_Criterion):
    score: Literal[0, 5]


class PrefCriterion(_Criterion):
    score: Literal[0, 2.5]  # type: ignore[valid-type]  # pydantic takes a float literal: the schema's enum is [0, 2.5]


class IntentCriterion(_Criterion):
    score: Literal[0, 5, 10]


Criteria = dict[str, tuple[str, float, type[_Criterion], str]]
"""field name -> (point key, max points, criterion model, description)."""


def criteria(targets: RubricTargets, *, retrieval: bool) -> Criteria:
    kinds = ("retrieval", "utilization") if retrieval else ("utilization",)
    out: Criteria = {}
    for kind in kinds:
        out[f"web_{kind}"] = (f"web.{kind}", WEB_POINTS, WebCriterion, f"website {kind}")
    for i, value in enumerate(targets.preferences, 1):
        for kind in kinds:
            out[f"pref_{i}_{kind}"] = (
                f"pref.{i}.{kind}",
                PREF_POINTS,
                PrefCriterion,
                f"preference {i} {value!r}: {kind}",
            )
    if targets.location is not None:
        for kind in kinds:
            desc = f"location {targets.location.raw!r}: {kind}"
            out[f"location_{kind}"] = (f"location.{kind}", PREF_POINTS, PrefCriterion, desc)
    out["intent"] = ("intent", INTENT_POINTS, IntentCriterion, "task completion")
    return out


def answer_schema(fields: Criteria) -> type[BaseModel]:
    spec: dict[str, Any] = {name: (model, Field(description=desc)) for name, (_, _, model, desc) in fields.items()}
    return create_model("RubricJudgment", __config__=ConfigDict(extra="ignore"), **spec)


def _user_message(t: Trajectory, targets: RubricTargets, rendered: Rendered, view: str) -> str:
    prefs = "\n".join(f"  {i}. {v}" for i, v in enumerate(targets.preferences, 1)) or "  (none)"
    location = ""
    if targets.location is not None:
        location = f"Expected location (location-aware website): {targets.location.raw}\n"
    return USER_TEMPLATE.format(
        level="?" if t.level is None else t.level,
        query=t.query,
        websites=" or ".join(targets.websites),
        preferences=prefs,
        location=location,
        view=view,
        trajectory=rendered.text,
    )


def _tag(ref: str) -> str:
    return ref.strip().strip("[]").strip().upper()


class _LlmRubricJudge(Judge[LlmSiteConfig]):
    uses_llm = True
    system_prompt: ClassVar[str]
    view_name: ClassVar[str]
    with_retrieval: ClassVar[bool] = False

    def render(self, t: Trajectory) -> Rendered:
        """The view of the trajectory this judge's prompt shows."""
        raise NotImplementedError

    def configure(self, settings: PassSettings) -> LlmSiteConfig:
        prompt = template_hash(self.system_prompt, USER_TEMPLATE)
        return LlmSiteConfig.model_validate({**llm_fields(settings, prompt), **site_fields(settings)})

    def messages(self, t: Trajectory) -> tuple[list[dict[str, str]], Rendered, Criteria]:
        targets = rubric_targets(t, self.config)
        rendered = self.render(t)
        fields = criteria(targets, retrieval=self.with_retrieval)
        messages = [
            {"role": "system", "content": self.system_prompt},
            {"role": "user", "content": _user_message(t, targets, rendered, self.view_name)},
        ]
        return messages, rendered, fields

    def estimate(self, trajectory: Trajectory) -> CallEstimate:
        messages, _, fields = self.messages(trajectory)
        prompt = sum(len(m["content"]) for m in messages) // 4
        return CallEstimate(1, prompt, COMPLETION_TOKENS_PER_CRITERION * len(fields))

    async def judge(self, trajectory: Trajectory, ctx: JudgeContext) -> Scorecard:
        messages, rendered, fields = self.messages(trajectory)
        llm = ctx.need_llm()
        try:
            answer = await llm.complete_json("judge", messages, answer_schema(fields), params=self.config.params)
        except LlmBadResponse as exc:
            return Scorecard.failed(str(exc), cost_usd=llm.totals.cost_usd)
        verdict = Scorecard(cost_usd=llm.totals.cost_usd)
        cap = intent_cap(trajectory)
        for name, (key, top, _, _) in fields.items():
            criterion = getattr(answer, name)
            ids = [rendered.refs[tag] for tag in map(_tag, criterion.evidence) if tag in rendered.refs]
            score, note = float(criterion.score), f"{self.config.model}: {criterion.score:g}/{top:g}"
            if key == "intent" and cap is not None and score > cap:
                score, note = cap, f"{note}, capped at {cap:g}: ended '{trajectory.end_reason}' without an answer"
            verdict.award(key, score, top, Evidence(event_ids=ids, text=criterion.justification, note=note))
        verdict.metrics = rubric_metrics(verdict.points, verdict.max_points)
        return verdict


def intent_cap(t: Trajectory) -> float | None:
    """The most intent points an episode without an answer can get, whatever the model says; None: no cap.

    A runner-forced stop (too many invalid actions, the step limit, a crash) carries no answer, so the
    task was not completed; a blocked episode keeps the rubric's half credit at most. The model cannot be
    checked against the pages, so the cap holds for every goal kind; ``rubric-rules``, which reads them, may
    still find a cart or reservation goal reached before such a stop.
    """
    if (t.answer or "").strip() and t.end_reason == "answered":
        return None
    return INTENT_POINTS / 2 if t.end_reason == "blocked" else 0.0


class RubricLlmJudge(_LlmRubricJudge):
    id = "rubric-llm"
    version = "2"
    description = "Persona2Web's reasoning-aware rubric (appendix E) as an LLM judge over the full trajectory"
    system_prompt = RUBRIC_SYSTEM
    view_name = "full trajectory with reasoning traces"
    with_retrieval = True

    def render(self, t: Trajectory) -> Rendered:
        return render_full(t)


class ActionWiseLlmJudge(_LlmRubricJudge):
    id = "action-wise"
    version = "2"
    description = "Action-wise baseline (LLM): utilization and intent from the action sequence only"
    system_prompt = ACTION_WISE_SYSTEM
    view_name = "actions of every step"

    def render(self, t: Trajectory) -> Rendered:
        return render_actions(t)


class OutcomeBasedLlmJudge(_LlmRubricJudge):
    id = "outcome-based"
    version = "2"
    description = "Outcome-based baseline (LLM): utilization and intent from the final action and its reasoning"
    system_prompt = OUTCOME_SYSTEM
    view_name = "final action and its reasoning"

    def render(self, t: Trajectory) -> Rendered:
        return render_outcome(t)
