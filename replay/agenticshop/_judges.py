"""AgenticShop's evaluation as judges over recorded curation episodes (``page.capture`` events).

- ``attribution`` (rules): each linked page is a valid product, an invalid page or an irrelevant link.
- ``hit-ratio`` (rules): the product is of the user's target brand and type.
- ``agenticshop-extract``: product information per page (schema.org by rule, otherwise the LLM).
- ``agenticshop-checklist`` (LLM): one SUCCESS / FAIL per checklist item and product, with a quote.

Point keys start with the checklist dimension (``brand_preferences.0.1``: product 0, item 1), so
``agree`` pools them per dimension. Only the first ``RESULTS_JUDGED`` links count, as in the reference.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, JsonValue, create_model

from p2w_rt.replay.agenticshop._extract import (
    EXTRACT_SYSTEM,
    EXTRACT_TEMPLATE,
    ProductInfo,
    extract_by_rules,
    extraction_messages,
    info_text,
)
from p2w_rt.replay.agenticshop._ids import ATTRIBUTION, CHECKLIST, EXTRACT, HIT
from p2w_rt.replay.agenticshop._pages import Attribution, Page, attribute, read_page
from p2w_rt.replay.agenticshop._settings import ShopSettings
from p2w_rt.replay.derived import PassSettings, ProducerConfig, StructuredLlm
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
from p2w_rt.schemas import DIMENSIONS, RESULTS_JUDGED, Evidence, ShopProfile
from p2w_runtime.data import load_profiles
from p2w_runtime.domain.trajectory import CaptureRecord, Trajectory
from p2w_runtime.errors import UserError
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


@dataclass(frozen=True, slots=True)
class Linked:
    """One curated link as recorded: its capture, the page read from it, and its attribution."""

    capture: CaptureRecord
    page: Page | None
    attribution: Attribution
    reason: str

    @property
    def url(self) -> str:
        return self.capture.final_url or self.capture.requested_url


async def linked_pages(t: Trajectory, ctx: JudgeContext, judged: int) -> list[Linked]:
    """The first ``judged`` captured links of the answer, read and attributed."""
    if not t.captures:
        raise JudgeError(f"episode {t.stream} has no page captures: it was not recorded or imported as a curation")
    out = []
    for c in sorted(t.captures, key=lambda c: c.index)[:judged]:
        page = None
        if c.dom_html is not None:
            page = read_page((await ctx.get_blob(c.dom_html)).decode("utf-8", errors="replace"))
        kind, reason = attribute(c.status, c.final_url or c.requested_url, page, c.error)
        out.append(Linked(c, page, kind, reason))
    return out


class ProfilesNeeded(UserError):
    """A judge that reads the users' checklists was chosen without ``--profiles``."""


class ShopConfig(ProducerConfig):
    """How many of an answer's links are judged (the reference judges the first three)."""

    results_judged: int


class ShopLlmConfig(LlmConfig, ShopConfig):
    """An LLM judge of the curated links: its model, prompt and parameters, and how many links it judges."""


ShopConfigT = TypeVar("ShopConfigT", bound=ShopConfig)


class _ShopJudge(Judge[ShopConfigT]):
    needs_profile: ClassVar[bool] = True

    def __init__(self, settings: PassSettings) -> None:
        super().__init__(settings)
        self.profiles: dict[str, ShopProfile] = {}
        self.source = settings.of(ShopSettings).profiles
        if self.needs_profile:
            if not self.source:
                raise ProfilesNeeded(f"the {self.id} judge needs AgenticShop user profiles (--profiles PATH)")
            self.profiles = {p.task_id: p for p in load_profiles(Path(self.source))}

    def profile(self, t: Trajectory) -> ShopProfile:
        try:
            return self.profiles[t.task_id]
        except KeyError:
            raise JudgeError(f"no AgenticShop profile for task {t.task_id!r} in {self.source}") from None

    def task_config(self, task_id: str) -> dict[str, JsonValue]:
        """The user's profile (checklist, target brand): a changed checklist is a new key, a moved file is not."""
        if not self.needs_profile:
            return {}
        profile = self.profiles.get(task_id)
        return {"profile": profile.model_dump(mode="json") if profile else None}

    async def pages(self, t: Trajectory, ctx: JudgeContext) -> list[Linked]:
        return await linked_pages(t, ctx, self.config.results_judged)

    def needs_io(self, trajectory: Trajectory) -> bool:
        return True  # page blobs are read from the store


def _shares(pages: list[Linked]) -> dict[str, float]:
    n = len(pages) or 1
    return {k: round(sum(p.attribution == k for p in pages) / n, 6) for k in ("valid", "invalid", "irrelevant")}


def shop_fields() -> dict[str, object]:
    """``ShopConfig``'s fields: the reference's number of judged links."""
    return {"results_judged": RESULTS_JUDGED}


class AttributionJudge(_ShopJudge[ShopConfig]):
    id = ATTRIBUTION
    version = "1"
    needs_profile = False
    description = "AgenticShop attribution (rules): valid product / invalid page / irrelevant link per curated link"

    def configure(self, settings: PassSettings) -> ShopConfig:
        return ShopConfig.model_validate(shop_fields())

    async def judge(self, trajectory: Trajectory, ctx: JudgeContext) -> Scorecard:
        verdict = Scorecard()
        pages = await self.pages(trajectory, ctx)
        for p in pages:
            note = f"{p.attribution}: {p.reason}"
            evidence = Evidence(event_ids=[p.capture.event_id], text=p.url, note=note)
            verdict.award(f"attribution.{p.capture.index}", float(p.attribution == "valid"), 1.0, evidence)
        verdict.metrics = {**_shares(pages), "products": float(len(pages))}
        return verdict


_BRAND_ITEM = re.compile(
    r"^(?:(?:product |listing )?brand(?: name| field)?|manufacturer)"
    r"(?: is(?: (?:explicitly|clearly))?(?: (?:listed|identified|named) as)?|(?: (?:explicitly|clearly))?"
    r" (?:listed|identified|named) as| exactly matches)"
    r" (?P<rest>.+)$|^product is from (?P<source>.+)$",
    re.IGNORECASE,
)
"""A checklist item that names the brand: "Brand is X", "Brand listed as X", "Product is from X", "Product brand is
explicitly listed as X on the product page", "Product brand field exactly matches "X"", "Manufacturer listed as X"."""
_NAME_END = re.compile(r",|;|\.(?:\s|$)|\s\(|\s(?:on|in|as|at|for|with|and|only|if|when|from|by)\s", re.IGNORECASE)
_OR = re.compile(r"\s+or\s+", re.IGNORECASE)


def _named_brand(item: str) -> str | None:
    """The one brand a checklist item names, or None: none named (a description, "one of", "not"), or several."""
    match = _BRAND_ITEM.match(item.strip())
    if match is None:
        return None
    rest = (match.group("rest") or match.group("source")).strip()
    quoted = re.match(r'^["\u201c](.+?)["\u201d]', rest)
    if quoted:
        return quoted.group(1).strip()
    if re.match(r"(?i)(?:one of|not|a|an|the|any)\b", rest) or ":" in rest:
        return None
    first, *others = _OR.split(rest, maxsplit=1)
    name = _NAME_END.split(first, maxsplit=1)[0].strip()
    if others and others[0][:1].isupper() or "," in first.split(" on ")[0] or not name[:1].isupper():
        return None  # "Seagate or Western Digital", "Jag Jeans, Signature by Levi Strauss": no single brand
    return name


def target_brand(profile: ShopProfile) -> str:
    """The target brand: a profile's ``target_brand``, else the first checklist item naming one brand (``_BRAND_ITEM``:
    "Brand is X", "Brand listed as X", "Product is from X"; not "Brand is one of: ..." nor "Brand is not ...")."""
    extra = (profile.model_extra or {}).get("target_brand")
    if extra:
        return str(extra)
    for item in profile.check_list.brand_preferences:
        brand = _named_brand(item)
        if brand:
            return brand
    return ""


NO_BRAND_ITEM = "no target brand: no target_brand in the profile and no checklist item naming a brand ('Brand is …')"
NO_SINGLE_BRAND = "no target brand: the checklist's brand items name no single brand ('one of', 'not', 'X or Y')"
NO_TYPE = "no product type: seed_product_type is null (open-ended curation)"


def missing_target(profile: ShopProfile) -> str:
    """What the hit ratio lacks for this user, "" when nothing. Said per cause and without the user's id, so a
    replay summary counts each cause once; ``metrics`` lists the users by id."""
    missing = []
    if not target_brand(profile):
        said = any(_BRAND_ITEM.match(i.strip()) for i in profile.check_list.brand_preferences)
        missing.append(NO_SINGLE_BRAND if said else NO_BRAND_ITEM)
    if not profile.seed_product_type:
        missing.append(NO_TYPE)
    return "; ".join(missing)


def _words(text: str) -> set[str]:
    return {w.strip(".,;:()'\"").lower() for w in text.split() if len(w.strip(".,;:()'\"")) > 2}


class HitRatioJudge(_ShopJudge[ShopConfig]):
    id = HIT
    version = "3"
    description = "AgenticShop hit ratio (rules): the product matches the target brand and product type"

    def configure(self, settings: PassSettings) -> ShopConfig:
        return ShopConfig.model_validate(shop_fields())

    async def judge(self, trajectory: Trajectory, ctx: JudgeContext) -> Scorecard:
        profile = self.profile(trajectory)
        missing = missing_target(profile)
        if missing:
            raise JudgeError(missing)
        brand, kind = target_brand(profile), profile.seed_product_type or ""
        verdict = Scorecard()
        pages = await self.pages(trajectory, ctx)
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


async def extract(p: Linked, ctx: JudgeContext, config: LlmConfig) -> ProductInfo:
    """Rules when the page has one schema.org Product, otherwise one LLM call over its text."""
    if p.page is None:
        return ProductInfo(source="no page")
    info = extract_by_rules(p.page)
    if info is not None:
        return info
    messages = extraction_messages(p.url, p.page)
    answer = await ctx.need_llm().complete_json("judge", messages, ProductInfo, params=config.params)
    return answer.model_copy(update={"source": config.model})


def _cost(llm: StructuredLlm | None) -> float | None:
    return llm.totals.cost_usd if llm is not None else None


class ExtractJudge(_ShopJudge[ShopLlmConfig]):
    id = EXTRACT
    version = "1"
    uses_llm = True
    needs_profile = False
    description = "AgenticShop extractor: product information per recorded page (schema.org by rule, else LLM)"

    def configure(self, settings: PassSettings) -> ShopLlmConfig:
        prompt = template_hash(EXTRACT_SYSTEM, EXTRACT_TEMPLATE)
        return ShopLlmConfig.model_validate({**llm_fields(settings, prompt), **shop_fields()})

    async def judge(self, trajectory: Trajectory, ctx: JudgeContext) -> Scorecard:
        verdict = Scorecard()
        try:
            for p in await self.pages(trajectory, ctx):
                info = await extract(p, ctx, self.config)
                evidence = Evidence(event_ids=[p.capture.event_id], text=info_text(info), note=info.source)
                verdict.award(f"extracted.{p.capture.index}", float(bool(info.name)), 1.0, evidence)
        except LlmBadResponse as exc:
            return Scorecard.failed(str(exc), cost_usd=_cost(ctx.llm))
        got = list(verdict.points.values())
        verdict.metrics = {"extracted": sum(got) / len(got) if got else 0.0}
        verdict.cost_usd = _cost(ctx.llm)
        return verdict


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


class ChecklistJudge(_ShopJudge[ShopLlmConfig]):
    id = CHECKLIST
    version = "1"
    uses_llm = True
    description = "AgenticShop checklist evaluation (LLM): one verdict per checklist item with a quote"

    def configure(self, settings: PassSettings) -> ShopLlmConfig:
        prompt = template_hash(CHECKLIST_SYSTEM, CHECKLIST_TEMPLATE)
        return ShopLlmConfig.model_validate({**llm_fields(settings, prompt), **shop_fields()})

    def estimate(self, trajectory: Trajectory) -> CallEstimate:
        """One call per page that answered (< 400); a page without schema.org data costs one extraction more."""
        answered = [
            c for c in trajectory.captures[: self.config.results_judged] if c.status is not None and c.status < 400
        ]
        profile = self.profile(trajectory)
        prompt = (len(CHECKLIST_SYSTEM) + len(checklist_text(profile)) + PRODUCT_CHARS) // 4
        completion = COMPLETION_PER_ITEM * len(profile.check_list.items())
        return CallEstimate(len(answered), prompt * len(answered), completion * len(answered))

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
            return Scorecard.failed(str(exc), cost_usd=_cost(ctx.llm))
        verdict.cost_usd = _cost(ctx.llm)
        metrics = {"score": sum(s for _, s in scores) / len(scores), **_shares(pages)}
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


SHOP_JUDGES = (AttributionJudge, HitRatioJudge, ExtractJudge, ChecklistJudge)
