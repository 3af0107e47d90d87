"""Judge every episode of a run with one or more judges: cached, concurrent, appended, never overwritten.

A judgment is a cache hit when a judgment with the same (trajectory hash, judge id, judge version,
config hash) is the latest: nothing is called, nothing appended. A cached failure is reported as a
failure on every pass (so the exit code says so every time), and re-judged only with ``retry_failed``
(LLM failures can be transient; re-judging them by default would pay for them again on every pass);
when the retry fails the same way (no ground truth, no task config) nothing new is appended. ``force``
re-judges everything and appends; older judgments stay. Appending and concurrency are ``replay.derived``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

import structlog

from p2w_runtime.episode import EpisodeRef, episodes_of
from p2w_runtime.errors import UserError
from p2w_runtime.llm import LlmBadResponse, LlmError
from p2w_runtime.store import Recorder
from replay.derived import (
    CacheKey,
    DerivedPass,
    LlmFactory,
    Outcome,
    Pool,
    Tally,
    call_log,
    latest_by_key,
    pass_claim,
)
from replay.judges import Judge, JudgeContext, JudgeError, Verdict
from replay.judging._records import JudgmentRecord, judgment_stream, read_judgments
from replay.trajectory import Trajectory, load_trajectories
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


def cache_key(judge: Judge, episode: Trajectory | EpisodeRef) -> CacheKey:
    return (episode.hash, judge.id, judge.version, judge.config_hash(episode.task_id))


def to_judgment(judge: Judge, t: Trajectory, key: CacheKey, verdict: Verdict) -> Judgment:
    return Judgment(
        episode_stream=t.stream,
        task_id=t.task_id,
        trajectory_hash=t.hash,
        judge_id=judge.id,
        judge_version=judge.version,
        config_hash=key[3],
        status="ok" if verdict.status == "ok" else "failed",
        points=verdict.points,
        max_points=verdict.max_points,
        evidence=verdict.evidence,
        metrics=verdict.metrics,
        cost_usd=verdict.cost_usd,
        error=verdict.error,
    )


class _Replay(DerivedPass[JudgeOutcome, ReplaySummary]):
    def __init__(
        self,
        store: Recorder,
        run_id: str,
        judges: Sequence[Judge],
        llm: LlmFactory | None,
        force: bool,
        retry_failed: bool,
        on_outcome: Callable[[JudgeOutcome], None] | None,
    ) -> None:
        super().__init__(store, judgment_stream(run_id), ReplaySummary(), force=force, on_outcome=on_outcome)
        self.retry_failed = retry_failed
        self.judges = judges
        self.llm_factory = llm
        self._llm: Any = None
        self.latest: dict[CacheKey, JudgmentRecord] = {}

    def llm(self) -> Any:
        if self._llm is None:
            if self.llm_factory is None:
                raise JudgeError("this judgment needs an LLM, and none is configured (--model / --base-url)")
            try:
                self._llm = self.llm_factory()
            except LlmError as exc:
                raise ReplayAborted(str(exc)) from None
        return self._llm

    async def judge_one(self, judge: Judge, t: Trajectory, key: CacheKey) -> None:
        calls, sink = call_log()
        scoped = None
        try:
            scoped = self.llm().scoped(sink) if judge.needs_llm(t) else None
            verdict = await judge.judge(t, JudgeContext(get_blob=self.store.get_blob, llm=scoped))
        except JudgeError as exc:
            verdict = Verdict.failed(str(exc), cost_usd=scoped.totals.cost_usd if scoped else None)
        except LlmBadResponse as exc:  # a judge that did not catch it itself: still a failed judgment
            verdict = Verdict.failed(str(exc), cost_usd=scoped.totals.cost_usd if scoped else None)
        except LlmError as exc:
            await self.writer.keep_calls(t, calls)
            raise ReplayAborted(
                f"{exc} (judge {judge.id}, episode {t.stream}); judgments made so far are kept"
            ) from None
        judgment = to_judgment(judge, t, key, verdict)
        previous = self.latest.get(key)
        same_failure = (
            previous is not None
            and judgment.status == "failed" == previous.judgment.status
            and previous.judgment.error == judgment.error
        )
        if previous is not None and same_failure and not self.force and not calls:
            self.report(JudgeOutcome.of(t, previous.judgment, cached=True, event_id=previous.event_id))
            return
        event_id = await self.writer.append(t, calls, judgment)
        self.report(JudgeOutcome.of(t, judgment, cached=False, event_id=event_id))

    async def run(self, run_id: str, concurrency: int) -> ReplaySummary:
        claims = [pass_claim("judge", run_id, j.id, j.version, j.config()) for j in self.judges]
        async with self.exclusive(claims):  # read the cache only once no other pass can be adding to it
            return await self._judge_all(run_id, concurrency)

    def _plan(self, episode: EpisodeRef) -> tuple[list[JudgeOutcome], list[Judge]]:
        """The episode's cached outcomes to report, and the judges still to run on it."""
        cached_outcomes, pending = [], []
        for judge in self.judges:
            cached = self.latest.get(cache_key(judge, episode))
            retry = self.retry_failed and cached is not None and cached.judgment.status == "failed"
            if not self.force and cached is not None and not retry:
                cached_outcomes.append(JudgeOutcome.of(episode, cached.judgment, cached=True, event_id=cached.event_id))
            else:
                pending.append(judge)
        return cached_outcomes, pending

    async def _judge_all(self, run_id: str, concurrency: int) -> ReplaySummary:
        self.latest = latest_by_key(await read_judgments(self.store, run_id))
        plans = [(episode, *self._plan(episode)) for episode in await episodes_of(self.store, run_id)]
        to_load = [episode.stream for episode, _, pending in plans if pending]  # all cached: events never read
        try:
            async with (
                Pool(concurrency) as pool,
                aclosing(load_trajectories(self.store, run_id, streams=to_load)) as loaded,
            ):
                for _, cached, pending in plans:
                    for outcome in cached:
                        self.report(outcome)
                    if not pending:
                        continue
                    t = await anext(loaded)  # in ``to_load`` order, read a chunk of episodes at a time
                    for judge in pending:
                        pool.check()
                        key = cache_key(judge, t)  # the episode may have grown since it was listed
                        if judge.needs_io(t):
                            await pool.start(self.judge_one, judge, t, key)
                        else:
                            await self.judge_one(judge, t, key)
                await pool.join()
        finally:
            await self.writer.flush()
            for judge in self.judges:
                await judge.aclose()
        return self.summary


async def replay_run(
    store: Recorder,
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
    summary = await _Replay(store, run_id, judges, llm, force, retry_failed, on_outcome).run(run_id, concurrency)
    log.info("replay.done", run_id=run_id, judged=summary.judged, cached=summary.cached, failed=summary.failed)
    return summary
