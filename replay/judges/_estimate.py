"""``--dry-run``: how many LLM calls, tokens and dollars a replay would take, without calling anything."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from p2w_rt.replay.derived import latest_by_key
from p2w_rt.replay.judges._base import Judge, JudgeError
from p2w_rt.replay.judges._records import read_judgments
from p2w_runtime.domain import episodes_of
from p2w_runtime.domain.trajectory import Trajectory, load_trajectory
from p2w_runtime.llm import PriceTable
from p2w_runtime.store import EventStore


@dataclass(slots=True)
class JudgeEstimate:
    judge_id: str
    episodes: int = 0
    cached: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0
    unjudgeable: list[str] = field(default_factory=list)


async def estimate_replay(
    store: EventStore,
    run_id: str,
    judges: Sequence[Judge[Any]],
    *,
    model: str,
    force: bool = False,
    retry_failed: bool = False,
    prices: PriceTable | None = None,
) -> list[JudgeEstimate]:
    """Per judge: episodes to judge, cache hits, and the LLM calls / tokens / cost of the rest.

    Tokens are estimated from the prompt each judge would send (4 characters a token); the cost
    is None when the model has no price in the table.
    """
    prices = prices or PriceTable.default()
    price = prices.price(model)
    latest = latest_by_key(await read_judgments(store, run_id))
    estimates = {judge.id: JudgeEstimate(judge.id) for judge in judges}
    for episode in await episodes_of(store, run_id):
        t: Trajectory | None = None
        for judge in judges:
            est = estimates[judge.id]
            est.episodes += 1
            cached = latest.get(judge.cache_key(episode))
            retry = retry_failed and cached is not None and cached.judgment.status == "failed"
            if not force and cached is not None and not retry:  # what run_pass would reuse
                est.cached += 1
                continue
            t = t or await load_trajectory(store, episode.stream)
            if not judge.needs_llm(t):
                continue
            try:
                calls = judge.estimate(t)
            except JudgeError as exc:
                est.unjudgeable.append(f"{t.task_id}: {exc}")
                continue
            est.calls += calls.calls
            est.prompt_tokens += calls.prompt_tokens
            est.completion_tokens += calls.completion_tokens
    for est in estimates.values():
        if price is None:
            est.cost_usd = None if est.calls else 0.0
        else:
            est.cost_usd = (
                est.prompt_tokens / 1000 * price.input_per_1k + est.completion_tokens / 1000 * price.output_per_1k
            )
    return list(estimates.values())
