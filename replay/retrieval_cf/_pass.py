"""The counterfactual-retrieval pass over a run: the ``retrieval`` family's pass (``replay.derived``).

Results go to the run's ``{run_id}/retrieval-cf`` stream; caching (trajectory hash, producer, version, config
hash), the claim that keeps two concurrent passes from evaluating an episode twice, appending and sealing are
``ProducerPass``'s, as for judgments and classifications.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from p2w_runtime.domain import RETRIEVAL_CF_SUFFIX
from p2w_runtime.errors import UserError
from p2w_runtime.store import EventStore
from replay.derived import (
    CacheKey,
    DerivedRecord,
    DerivedStream,
    Family,
    Outcome,
    PassKind,
    ProducerPass,
    Tally,
    register,
)
from replay.retrieval_cf._producer import CounterfactualRetrieval, RetrievalSettings, UnknownRetrieval
from schemas import RetrievalCounterfactual


@dataclass(frozen=True, slots=True)
class CounterfactualRecord(DerivedRecord[RetrievalCounterfactual]):
    @property
    def key(self) -> CacheKey:
        c = self.payload
        return (c.trajectory_hash, c.retrieval_id, c.retrieval_version, c.config_hash)


COUNTERFACTUALS = DerivedStream(
    RETRIEVAL_CF_SUFFIX, "retrieval.counterfactual", RetrievalCounterfactual, CounterfactualRecord
)

RETRIEVALS: Family[RetrievalSettings, CounterfactualRetrieval] = register(
    Family(kind="retrieval", option="--retriever", producers=(CounterfactualRetrieval,), unknown=UnknownRetrieval)
)


@dataclass(frozen=True, slots=True)
class CounterfactualOutcome(Outcome[RetrievalCounterfactual]):
    pass


@dataclass(slots=True)
class CounterfactualSummary(Tally[CounterfactualOutcome]):
    run_id: str


class CounterfactualAborted(UserError):
    """Never raised by a producer that calls no model; the pass kind names it all the same."""


RETRIEVING = PassKind(COUNTERFACTUALS, CounterfactualOutcome, CounterfactualAborted, "counterfactual retrievals")


async def counterfactual_run(
    store: EventStore,
    run_id: str,
    producer: CounterfactualRetrieval,
    *,
    force: bool = False,
    on_outcome: Callable[[CounterfactualOutcome], None] | None = None,
) -> CounterfactualSummary:
    """Evaluate every counted episode of ``run_id`` with ``producer``; cached results are reused."""
    summary = CounterfactualSummary(run_id=run_id)
    batch = ProducerPass(
        store, run_id, [producer], RETRIEVING, summary, force=force, retry_failed=True, on_outcome=on_outcome
    )
    return await batch.run(concurrency=1)
