"""Judge every episode of a run with one or more judges: the ``judge`` family's pass (``replay.derived``).

Caching, retrying failures, appending and concurrency are ``replay.derived.ProducerPass``'s: a cached
failure is reported every pass and re-judged only with ``retry_failed`` (LLM failures can be transient;
re-judging them by default would pay for them again on every pass).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import structlog

from p2w_runtime.errors import UserError
from p2w_runtime.store import EventStore
from replay.derived import LlmFactory, Outcome, PassKind, ProducerPass, Tally
from replay.judges import Judge
from replay.judging._records import JUDGMENTS
from schemas import Judgment

log = structlog.get_logger(__name__)


class ReplayAborted(UserError):
    """The batch cannot go on (LLM endpoint down or misconfigured); judgments made so far are kept."""


@dataclass(frozen=True, slots=True)
class JudgeOutcome(Outcome[Judgment]):
    @property
    def judgment(self) -> Judgment:
        return self.payload


@dataclass(slots=True)
class ReplaySummary(Tally[JudgeOutcome]):
    @property
    def judged(self) -> int:
        return self.new

    @property
    def cost_usd(self) -> float:
        """What this pass paid: the judgments it made, failed ones included."""
        return sum((o.judgment.cost_usd for o in self.outcomes if not o.cached and o.judgment.cost_usd), 0.0)


JUDGING = PassKind(JUDGMENTS, JudgeOutcome, ReplayAborted, "judgments")


async def replay_run(
    store: EventStore,
    run_id: str,
    judges: Sequence[Judge],
    *,
    llm: LlmFactory | None = None,
    concurrency: int = 8,
    force: bool = False,
    retry_failed: bool = False,
    on_outcome: Callable[[JudgeOutcome], None] | None = None,
) -> ReplaySummary:
    """Judge every episode of ``run_id`` with each of ``judges``; ``on_outcome`` sees each result as it lands."""
    log.info("replay.start", run_id=run_id, judges=[j.id for j in judges], force=force, retry_failed=retry_failed)
    judging = ProducerPass(
        store,
        run_id,
        judges,
        JUDGING,
        ReplaySummary(),
        llm=llm,
        force=force,
        retry_failed=retry_failed,
        on_outcome=on_outcome,
    )
    summary = await judging.run(concurrency)
    log.info("replay.done", run_id=run_id, judged=summary.judged, cached=summary.cached, failed=summary.failed)
    return summary
