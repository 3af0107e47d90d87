"""The one runner of producers over a run: cached results skipped unread, the rest made, appended, sealed.

A result is a cache hit when the latest one with the same (trajectory hash, producer id, version, config
hash) exists: the episode's events are not even read when every producer has a hit. A cached failure is
reported as a failure on every pass (the exit code says so) and made again only with ``retry_failed``;
when the retry fails the same way without calling a model, nothing new is appended, yet it counts as made by
this pass, not cached. ``force`` makes
everything again and appends; older results stay. An endpoint that is down stops the pass with what was
made so far kept (``PassAborted``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from contextlib import aclosing
from typing import Any, TypeVar

from p2w_rt.replay.derived._pass import DerivedPass, Outcome, Pool, Tally, call_log
from p2w_rt.replay.derived._producer import NO_LLM, LlmEndpoint, LlmFactory, ProduceContext, Producer, ProducerError
from p2w_rt.replay.derived._registry import Family
from p2w_rt.replay.derived._stream import CacheKey, Derived, DerivedRecord, latest_by_key
from p2w_runtime.collector import collector_frozen, collector_paused
from p2w_runtime.domain import EpisodeRef, episodes_of
from p2w_runtime.domain.trajectory import Trajectory, load_trajectories
from p2w_runtime.errors import UserError
from p2w_runtime.llm import LlmBadResponse, LlmError
from p2w_runtime.logs import get_logger
from p2w_runtime.store import EventStore

log = get_logger(__name__)

P = TypeVar("P", bound=Producer[Any, Any, Any])
OutcomeT = TypeVar("OutcomeT", bound=Outcome[Any])
SummaryT = TypeVar("SummaryT", bound=Tally[Any])


class PassAborted(UserError):
    """The pass cannot go on (LLM endpoint down or misconfigured); the results made so far are kept."""


async def run_pass(
    family: Family[Any, P, OutcomeT, SummaryT],
    store: EventStore,
    run_id: str,
    producers: Sequence[P],
    *,
    llm: LlmFactory | None = None,
    concurrency: int = 8,
    force: bool = False,
    retry_failed: bool = False,
    on_outcome: Callable[[OutcomeT], None] | None = None,
) -> SummaryT:
    """Make ``family``'s results with ``producers`` for every counted episode of ``run_id``; ``on_outcome`` sees
    each one as it lands (cached ones too). ``llm`` is called on first need, so a rules or cached pass needs none."""
    ids = [p.id for p in producers]
    log.info(f"{family.kind}.pass.start", run_id=run_id, producers=ids, force=force, retry_failed=retry_failed)
    summary = family.summary(run_id, producers)
    retry = retry_failed or family.retries_failures
    work = ProducerPass(store, run_id, producers, family, summary, llm, force, retry, on_outcome)
    with collector_frozen():
        await work.run(concurrency)
    log.info(f"{family.kind}.pass.done", run_id=run_id, new=summary.new, cached=summary.cached, failed=summary.failed)
    return summary


class ProducerPass(DerivedPass[OutcomeT, SummaryT]):
    """One pass of ``producers`` (one family) over a run's counted episodes."""

    def __init__(
        self,
        store: EventStore,
        run_id: str,
        producers: Sequence[Producer[Any, Any, Any]],
        family: Family[Any, Any, OutcomeT, Any],
        summary: SummaryT,
        llm: LlmFactory | None,
        force: bool,
        retry_failed: bool,
        on_outcome: Callable[[OutcomeT], None] | None,
    ) -> None:
        super().__init__(store, family.stream.name(run_id), summary, force=force, on_outcome=on_outcome)
        self.run_id = run_id
        self.producers = producers
        self.family = family
        self.retry_failed = retry_failed
        self.llm_factory = llm
        self._llm: LlmEndpoint | None = None
        self.latest: dict[CacheKey, DerivedRecord[Any]] = {}

    def llm(self) -> LlmEndpoint:
        if self._llm is None:
            if self.llm_factory is None:
                raise ProducerError(NO_LLM)
            try:
                self._llm = self.llm_factory()
            except LlmError as exc:
                raise PassAborted(str(exc)) from None
        return self._llm

    def _reuse(self, record: DerivedRecord[Any] | None) -> bool:
        if record is None or self.force:
            return False
        return not (self.retry_failed and record.payload.status == "failed")

    async def one(self, producer: Producer[Any, Any, Any], t: Trajectory, key: CacheKey) -> None:
        calls, sink = call_log()
        ctx = ProduceContext(get_blob=self.store.get_blob)
        try:
            ctx.llm = self.llm().scoped(sink) if producer.needs_llm(t) else None
            verdict = await producer.produce(t, ctx)
        except (ProducerError, LlmBadResponse) as exc:  # LlmBadResponse: a producer that did not catch it itself
            verdict = producer.failed(str(exc), ctx.llm.totals.cost_usd if ctx.llm is not None else None)
        except LlmError as exc:
            await self.writer.keep_calls(t, calls)
            raise PassAborted(
                f"{exc} ({producer.kind} {producer.id}, episode {t.stream}); {self.family.noun} made so far are kept"
            ) from None
        except asyncio.CancelledError:  # another producer stopped the pass (or Ctrl-C): what this one paid for stays
            await self.writer.keep_calls(t, calls)
            raise
        payload = producer.payload(t, key, verdict)
        previous = self.latest.get(key)
        if previous is not None and not self.force and not calls and _same_failure(previous.payload, payload):
            # made again, so not cached; the failure on record already says it, so nothing is appended
            self.report(self.family.outcome.of(t, payload, cached=False, event_id=previous.event_id))
            return
        event_id = await self.writer.append(t, calls, payload)
        self.report(self.family.outcome.of(t, payload, cached=False, event_id=event_id))

    async def run(self, concurrency: int) -> SummaryT:
        await self.family.stream.check_free(self.store, self.run_id)
        async with self.exclusive([p.claim(self.run_id) for p in self.producers]):
            return await self._run_all(concurrency)  # the cache is read once no other pass can be adding to it

    def _plan(self, episode: EpisodeRef) -> tuple[list[OutcomeT], list[Producer[Any, Any, Any]]]:
        """The episode's cached outcomes to report, and the producers still to run on it."""
        cached_outcomes, pending = [], []
        for producer in self.producers:
            cached = self.latest.get(producer.cache_key(episode))
            if cached is not None and self._reuse(cached):
                cached_outcomes.append(
                    self.family.outcome.of(episode, cached.payload, cached=True, event_id=cached.event_id)
                )
            else:
                pending.append(producer)
        return cached_outcomes, pending

    async def _run_all(self, concurrency: int) -> SummaryT:
        with collector_paused():  # the run's results and episodes, kept for the whole pass: nothing to collect
            self.latest = latest_by_key(await self.family.stream.read(self.store, self.run_id))
            episodes = await episodes_of(self.store, self.run_id)
            order = {episode.stream: n for n, episode in enumerate(episodes)}
            plans = [self._plan(episode) for episode in episodes]
        to_load = [e.stream for e, (_, pending) in zip(episodes, plans, strict=True) if pending]
        try:
            async with (
                Pool(concurrency) as pool,
                aclosing(load_trajectories(self.store, self.run_id, streams=to_load)) as loaded,
            ):
                for cached, pending in plans:
                    for outcome in cached:
                        self.report(outcome)
                    if not pending:
                        continue  # all cached: the episode's events are not even read
                    t = await anext(loaded)  # in ``to_load`` order, a chunk of episodes read at a time
                    for producer in pending:
                        pool.check()
                        key = producer.cache_key(t)  # the episode may have grown since it was listed
                        if producer.needs_io(t):
                            await pool.start(self.one, producer, t, key)
                        else:
                            await self.one(producer, t, key)
                await pool.join()
        finally:
            await self.writer.flush()
            for producer in self.producers:
                await producer.aclose()
        self.summary.outcomes.sort(key=lambda o: order.get(o.stream, len(order)))
        return self.summary


def _same_failure(previous: Derived, new: Derived) -> bool:
    return bool(new.status == "failed" == previous.status and previous.error == new.error)
