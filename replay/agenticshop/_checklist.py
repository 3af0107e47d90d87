"""``agenticshop-checklist`` (LLM): one SUCCESS / FAIL per checklist item and product, with a quote.

Point keys start with the checklist dimension (``brand_preferences.0.1``: product 0, item 1), so ``agree`` pools them
per dimension."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from p2w_rt.replay.agenticshop._extract import info_text
from p2w_rt.replay.agenticshop._ids import CHECKLIST
from p2w_rt.replay.agenticshop._linked import Linked, extract, shares
from p2w_rt.replay.agenticshop._shop_judge import ShopLlmJudge, cost
from p2w_rt.replay.judges import CallEstimate, JudgeContext, JudgeError, Scorecard
from p2w_rt.schemas import DIMENSIONS, Evidence, ShopProfile
from p2w_runtime.domain.trajectory import Trajectory
from p2w_runtime.llm import LlmBadResponse

CHECKLIST_SYSTEM = """You are an expert product evaluation assistant. Decide for each item of the user's checklist
whether the product satisfies it (SUCCESS) or not (FAIL), from the product data alone.
If the product data does not show it, annotate FAIL. For every item quote the words of the product data
your decision rests on (empty when there are none) and give one sentence of reasoning."""
PRODUCT_CHARS = 3000
"""Typical size of an extracted product as the checklist prompt shows it, for ``--dry-run``."""
COMPLETION_PER_ITEM = 40
CHECKLIST_TEMPLATE = """PRODUCT (extracted from the recorded page {url}):
{product}

CHECKLIST (user requirements):
{checklist}"""


class ItemVerdict(BaseModel):
    model_config = ConfigDict(extra="ignore")

    status: Literal["SUCCESS", "FAIL"]
    evidence: str = Field(default="", description="Words quoted from the product data; empty when none")
    reasoning: str = ""


def checklist_schema(profile: ShopProfile) -> type[BaseModel]:
    spec: dict[str, Any] = {
        f"{d}_{k}": (ItemVerdict, Field(description=text)) for d, k, text in profile.check_list.items()
    }
    return create_model("ChecklistEvaluation", __config__=ConfigDict(extra="ignore"), **spec)


def checklist_text(profile: ShopProfile) -> str:
    return "\n".join(f"{d}_{k}: {text}" for d, k, text in profile.check_list.items())


class ChecklistJudge(ShopLlmJudge):
    id = CHECKLIST
    version = "1"
    description = "AgenticShop checklist evaluation (LLM): one verdict per checklist item with a quote"
    prompt = (CHECKLIST_SYSTEM, CHECKLIST_TEMPLATE)

    def estimate(self, trajectory: Trajectory) -> CallEstimate:
        """One call per page that answered (< 400); a page without schema.org data costs one extraction more."""
        answered = [
            c for c in trajectory.captures[: self.config.results_judged] if c.status is not None and c.status < 400
        ]
        profile = self.profile(trajectory)
        prompt_tokens = (len(CHECKLIST_SYSTEM) + len(checklist_text(profile)) + PRODUCT_CHARS) // 4
        completion_tokens = COMPLETION_PER_ITEM * len(profile.check_list.items())
        return CallEstimate(len(answered), prompt_tokens * len(answered), completion_tokens * len(answered))

    async def judge(self, trajectory: Trajectory, ctx: JudgeContext) -> Scorecard:
        profile = self.profile(trajectory)
        items = profile.check_list.items()
        if not items:
            raise JudgeError(f"profile {profile.task_id} has an empty checklist")
        verdict = Scorecard()
        pages = await self.pages(trajectory, ctx)
        scores: list[tuple[Linked, float]] = []
        try:
            for p in pages:
                scores.append((p, await self._product(p, profile, ctx, verdict)))
        except LlmBadResponse as exc:
            return Scorecard.failed(str(exc), cost_usd=cost(ctx.llm))
        verdict.cost_usd = cost(ctx.llm)
        metrics = {"score": sum(s for _, s in scores) / len(scores), **shares(pages)}
        for d in DIMENSIONS:
            keys = [k for k in verdict.max_points if k.startswith(f"{d}.")]
            if keys:
                metrics[f"dim.{d}"] = sum(verdict.points[k] for k in keys) / len(keys)
        valid = [s for p, s in scores if p.attribution == "valid"]
        if valid:
            metrics["score_valid"] = sum(valid) / len(valid)
        verdict.metrics = {k: round(v, 6) for k, v in metrics.items()}
        return verdict

    async def _product(self, p: Linked, profile: ShopProfile, ctx: JudgeContext, verdict: Scorecard) -> float:
        """Award every checklist item for one product; returns its satisfied share."""
        i, ids = p.capture.index, [p.capture.event_id]
        if p.attribution == "invalid" or p.page is None:
            for d, k, _ in profile.check_list.items():
                note = f"FAIL without a model call: invalid page ({p.reason}), no product data"
                verdict.award(f"{d}.{i}.{k}", 0.0, 1.0, Evidence(event_ids=ids, note=note))
            return 0.0
        info = await extract(p, ctx, self.config)
        messages = [
            {"role": "system", "content": CHECKLIST_SYSTEM},
            {
                "role": "user",
                "content": CHECKLIST_TEMPLATE.format(
                    url=p.url, product=info_text(info), checklist=checklist_text(profile)
                ),
            },
        ]
        answer = await ctx.need_llm().complete_json(
            "judge", messages, checklist_schema(profile), params=self.config.params
        )
        page_text = " ".join(f"{info_text(info)} {p.page.text}".split()).lower()
        satisfied = 0
        for d, k, _ in profile.check_list.items():
            item: ItemVerdict = getattr(answer, f"{d}_{k}")
            quote = " ".join(item.evidence.split())
            found = "quote found on the page" if quote and quote.lower() in page_text else "quote NOT on the page"
            note = f"{self.config.model}: {item.status}; {found if quote else 'no quote'}"
            ok = item.status == "SUCCESS"
            satisfied += ok
            verdict.award(
                f"{d}.{i}.{k}",
                float(ok),
                1.0,
                Evidence(event_ids=ids, text=f"{quote} — {item.reasoning}" if quote else item.reasoning, note=note),
            )
        return satisfied / len(profile.check_list.items())
