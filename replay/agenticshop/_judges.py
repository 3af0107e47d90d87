"""AgenticShop's evaluation as judges over recorded curation episodes (``page.capture`` events).

- ``attribution`` (rules): each linked page is a valid product, an invalid page or an irrelevant link.
- ``hit-ratio`` (rules): the product is of the user's target brand and type (``_target.py``).
- ``agenticshop-extract``: product information per page (schema.org by rule, otherwise the LLM).
- ``agenticshop-checklist`` (LLM): one SUCCESS / FAIL per checklist item and product (``_checklist.py``).

Only the first ``RESULTS_JUDGED`` links count, as in the reference (``_shop_judge.py``).
"""

from __future__ import annotations

from p2w_rt.replay.agenticshop._checklist import ChecklistJudge
from p2w_rt.replay.agenticshop._extract import EXTRACT_SYSTEM, EXTRACT_TEMPLATE, extract_by_rules, info_text
from p2w_rt.replay.agenticshop._ids import ATTRIBUTION, EXTRACT, HIT
from p2w_rt.replay.agenticshop._linked import extract, shares
from p2w_rt.replay.agenticshop._shop_judge import ShopLlmJudge, ShopRulesJudge, cost
from p2w_rt.replay.agenticshop._target import missing_target, target_brand
from p2w_rt.replay.judges import JudgeContext, JudgeError, Scorecard
from p2w_rt.schemas import Evidence
from p2w_runtime.domain.trajectory import Trajectory
from p2w_runtime.llm import LlmBadResponse


class AttributionJudge(ShopRulesJudge):
    id = ATTRIBUTION
    version = "2"
    needs_profile = False
    description = "AgenticShop attribution (rules): valid product / invalid page / irrelevant link per curated link"

    async def judge(self, trajectory: Trajectory, ctx: JudgeContext) -> Scorecard:
        verdict = Scorecard()
        pages = await self.pages(trajectory, ctx)
        for p in pages:
            note = f"{p.attribution}: {p.reason}"
            evidence = Evidence(event_ids=[p.capture.event_id], text=p.url, note=note)
            verdict.award(f"attribution.{p.capture.index}", float(p.attribution == "valid"), 1.0, evidence)
        verdict.metrics = {**shares(pages), "products": float(len(pages))}
        return verdict


def _words(text: str) -> set[str]:
    return {w.strip(".,;:()'\"").lower() for w in text.split() if len(w.strip(".,;:()'\"")) > 2}


class HitRatioJudge(ShopRulesJudge):
    id = HIT
    version = "4"
    description = "AgenticShop hit ratio (rules): the product matches the target brand and product type"

    async def judge(self, trajectory: Trajectory, ctx: JudgeContext) -> Scorecard:
        profile = self.profile(trajectory)
        pages = await self.pages(trajectory, ctx)  # an empty curation first: it has no figure whatever the profile
        missing = missing_target(profile)
        if missing:
            raise JudgeError(missing)
        brand, kind = target_brand(profile), profile.seed_product_type or ""
        verdict = Scorecard()
        for p in pages:
            info = extract_by_rules(p.page) if p.page is not None and p.attribution == "valid" else None
            seen_brand = info.brand if info else ""
            about = f"{info.name} {info.category} {info.description}" if info else ""
            brand_ok = bool(seen_brand) and brand.lower() in seen_brand.lower()
            type_ok = bool(about) and _words(kind) <= _words(about)
            note = f"brand {seen_brand or '?'} vs {brand}: {brand_ok}; type {kind!r} in product: {type_ok}"
            evidence = Evidence(event_ids=[p.capture.event_id], text=info.name if info else p.url, note=note)
            verdict.award(f"hit.{p.capture.index}", float(brand_ok and type_ok), 1.0, evidence)
        hits = [verdict.points[k] for k in verdict.points]
        verdict.metrics = {"hit_ratio": sum(hits) / len(hits) if hits else 0.0, "hit_any": float(any(hits))}
        return verdict


class ExtractJudge(ShopLlmJudge):
    id = EXTRACT
    version = "1"
    needs_profile = False
    description = "AgenticShop extractor: product information per recorded page (schema.org by rule, else LLM)"
    prompt = (EXTRACT_SYSTEM, EXTRACT_TEMPLATE)

    async def judge(self, trajectory: Trajectory, ctx: JudgeContext) -> Scorecard:
        verdict = Scorecard()
        try:
            for p in await self.pages(trajectory, ctx):
                info = await extract(p, ctx, self.config)
                evidence = Evidence(event_ids=[p.capture.event_id], text=info_text(info), note=info.source)
                verdict.award(f"extracted.{p.capture.index}", float(bool(info.name)), 1.0, evidence)
        except LlmBadResponse as exc:
            return Scorecard.failed(str(exc), cost_usd=cost(ctx.llm))
        got = list(verdict.points.values())
        verdict.metrics = {"extracted": sum(got) / len(got) if got else 0.0}
        verdict.cost_usd = cost(ctx.llm)
        return verdict


SHOP_JUDGES = (AttributionJudge, HitRatioJudge, ExtractJudge, ChecklistJudge)
