"""The counterfactual-retrieval pass over a run: cached by (trajectory hash, producer, version, retriever config).

Results go to the run's ``{run_id}/retrieval-cf`` stream through ``replay.derived``'s writer (caused by each
episode's last event, sealed at the end), exactly as classifications do; a second pass with the same retriever
reuses them and writes nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from p2w_runtime.store import RETRIEVAL_CF_STREAM_SUFFIX, Recorder
from replay.derived import CacheKey, DerivedPass, DerivedRecord, DerivedStream, Outcome, Tally, latest_ok, pass_claim
from replay.retrieval_cf._producer import CounterfactualRetrieval
from replay.trajectory import load_trajectories
from schemas import RetrievalCounterfactual


@dataclass(frozen=True, slots=True)
class CounterfactualRecord(DerivedRecord[RetrievalCounterfactual]):
    @property
    def key(self) -> CacheKey:
        c = self.payload
        return (c.trajectory_hash, c.producer_id, c.producer_version, c.config_hash)


COUNTERFACTUALS = DerivedStream(
    RETRIEVAL_CF_STREAM_SUFFIX, "retrieval.counterfactual", RetrievalCounterfactual, CounterfactualRecord
)


@dataclass(frozen=True, slots=True)
class CounterfactualOutcome(Outcome[RetrievalCounterfactual]):
    pass


@dataclass(slots=True)
class CounterfactualSummary(Tally[CounterfactualOutcome]):
    run_id: str


class _Pass(DerivedPass[CounterfactualOutcome, CounterfactualSummary]):
    async def run(self, run_id: str, producer: CounterfactualRetrieval) -> CounterfactualSummary:
        key_of = (producer.id, producer.version, producer.config_hash())
        latest = {} if self.force else latest_ok(await COUNTERFACTUALS.read(self.store, run_id))
        try:
            async for t in load_trajectories(self.store, run_id):
                key = (t.hash, *key_of)
                if (record := latest.get(key)) is not None:
                    self.report(CounterfactualOutcome.of(t, record.payload, cached=True, event_id=record.event_id))
                    continue
                payload = await asyncio.to_thread(producer.evaluate, t)
                event_id = await self.writer.append(t, [], payload)
                self.report(CounterfactualOutcome.of(t, payload, cached=False, event_id=event_id))
        finally:
            await self.writer.flush()
        return self.summary


async def counterfactual_run(
    store: Recorder,
    run_id: str,
    producer: CounterfactualRetrieval,
    *,
    force: bool = False,
    on_outcome: Callable[[CounterfactualOutcome], None] | None = None,
) -> CounterfactualSummary:
    """Evaluate every counted episode of ``run_id`` with ``producer``; cached results are reused."""
    summary = CounterfactualSummary(run_id=run_id)
    stream = COUNTERFACTUALS.name(run_id)
    batch = _Pass(store, stream, summary, force=force, on_outcome=on_outcome)
    claim = pass_claim("retrieval-cf", run_id, producer.id, producer.version, producer.config())
    async with batch.exclusive([claim]):
        return await batch.run(run_id, producer)
