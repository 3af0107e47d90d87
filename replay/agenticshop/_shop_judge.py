"""What every AgenticShop judge shares: the users' profiles it reads, how many links it judges, and its config (by
rules, or an LLM with its prompt)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, TypeVar

from pydantic import JsonValue

from p2w_rt.replay.agenticshop._linked import Linked, linked_pages
from p2w_rt.replay.agenticshop._settings import ShopSettings
from p2w_rt.replay.derived import PassSettings, ProducerConfig, StructuredLlm
from p2w_rt.replay.judges import Judge, JudgeContext, JudgeError, LlmConfig, llm_fields, template_hash
from p2w_rt.schemas import RESULTS_JUDGED, ShopProfile
from p2w_runtime.data import load_profiles
from p2w_runtime.domain.trajectory import Trajectory
from p2w_runtime.errors import UserError


class ProfilesNeeded(UserError):
    """A judge that reads the users' checklists was chosen without ``--profiles``."""


class ShopConfig(ProducerConfig):
    """How many of an answer's links are judged (the reference judges the first three)."""

    results_judged: int


class ShopLlmConfig(LlmConfig, ShopConfig):
    """An LLM judge of the curated links: its model, prompt and parameters, and how many links it judges."""


ShopConfigT = TypeVar("ShopConfigT", bound=ShopConfig)
SHOP_FIELDS = {"results_judged": RESULTS_JUDGED}
"""``ShopConfig``'s fields: the reference's number of judged links."""


class ShopJudge(Judge[ShopConfigT]):
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


class ShopRulesJudge(ShopJudge[ShopConfig]):
    """A judge by rules: its config is the number of judged links."""

    def configure(self, settings: PassSettings) -> ShopConfig:
        return ShopConfig.model_validate(SHOP_FIELDS)


class ShopLlmJudge(ShopJudge[ShopLlmConfig]):
    """A judge that calls the model: its config adds the model, its parameters and the hash of ``prompt``."""

    uses_llm = True
    prompt: ClassVar[tuple[str, ...]]
    """The system prompt and the templates the judge fills: a changed one makes its judgments stale."""

    def configure(self, settings: PassSettings) -> ShopLlmConfig:
        return ShopLlmConfig.model_validate({**llm_fields(settings, template_hash(*self.prompt)), **SHOP_FIELDS})


def cost(llm: StructuredLlm | None) -> float | None:
    """What the judge's model calls of an episode cost so far."""
    return llm.totals.cost_usd if llm is not None else None
