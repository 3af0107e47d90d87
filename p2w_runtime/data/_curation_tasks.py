"""AgenticShop user profiles as ``record`` tasks: one curation task per (category, user).

The task text is the reference's search prompt (``prepare_search_input.py``: situation, budget, query and
the per-dimension user context, then "recommend the top 3 products"), so the narrative stands in for a
memory bank, followed by the answer format the reference asks its search LLMs for
(``{"search_results": [{"product_name", "product_url", "reasoning"}]}``), to be given in ``stop [...]``.
The task id is the importer's (``{category}-{user}``), so a recorded curation is judged like an imported one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from p2w_rt.schemas import DIMENSIONS, RESULTS_JUDGED, ShopProfile, TaskFile
from p2w_runtime.data._agenticshop import load_profiles
from p2w_runtime.data._tasks import Task, TaskSet

CURATION_SITE = "shopping"
ANSWER_FORMAT = (
    'When done, answer with stop [{"search_results": [{"product_name": "...", "product_url": "...", '
    '"reasoning": "..."}]}]: exactly RESULTS products as JSON, each product_url the full address of the '
    "product's own page."
)


def curation_prompt(profile: ShopProfile) -> str:
    """The reference's search prompt for one user, then the answer format of ``stop``."""
    parts = ["You are a shopping assistant helping a user find products that fit their context and needs."]
    if profile.seed_product_type:
        parts.append(f"The user is looking for {profile.seed_product_type}.")
    if profile.situation:
        parts.append(f"The user's situation is: {profile.situation.rstrip('.')}.")
    if profile.budget_range:
        parts.append(f"They are thinking a budget {profile.budget_range}.")
    parts.append(f'The user says: "{profile.user_query}".')
    context = [(d, getattr(profile.user_context, d)) for d in DIMENSIONS if getattr(profile.user_context, d)]
    if context:
        parts.append("The user's shopping preferences and context are as follows:")
        parts += [f'{d}: "{text}".' for d, text in context]
    parts.append(
        f"Task: search this shop and recommend the top {RESULTS_JUDGED} products among your search results. "
        "For each pick, briefly explain why it fits this user, referencing their budget, needs, and preferences."
    )
    parts.append(ANSWER_FORMAT.replace("RESULTS", str(RESULTS_JUDGED)))
    return " ".join(parts)


@dataclass(frozen=True)
class CurationTaskSet(TaskSet):
    """Profiles as tasks; named ``agenticshop@…`` so a run says which benchmark its tasks came from."""

    @property
    def dataset_id(self) -> str:
        return f"agenticshop@{self.content_hash[:12]}"


def curation_tasks(profiles: Path, start_url: str) -> CurationTaskSet:
    """Every profile of ``profiles`` (a ``*_user_profile.json`` or a folder) as a task starting at ``start_url``.

    Level is 0 (a curation has no ambiguity levels) and there is no ground truth: the checklist judges it.
    """
    tasks: dict[str, Task] = {}
    for profile in load_profiles(profiles):
        intent = curation_prompt(profile)
        file = TaskFile(sites=[CURATION_SITE], task_id=profile.task_id, start_url=start_url, intent=intent)
        tasks[profile.task_id] = Task(
            task_id=profile.task_id,
            persona=profile.user,
            query_set=profile.query_type,
            level=0,
            intent=intent,
            start_url=start_url,
            file=file,
            path=Path(profiles),
        )
    return CurationTaskSet(root=Path(profiles), tasks=tasks)
