"""Judge every episode of a run with one or more judges: cached, concurrent, appended, never overwritten.

A judgment is a cache hit when the latest judgment with the same (trajectory hash, judge id,
judge version, config hash) succeeded: nothing is called, nothing appended. A failed judgment
is retried next time (LLM failures can be transient); when the retry fails the same way
(no ground truth, no task config) nothing new is appended either. ``force`` re-judges and
appends; older judgments stay.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog

from p2w_runtime.errors import UserError
from p2w_runtime.llm import LlmBadResponse, LlmError
from p2w_runtime.store import Recorder
from replay.judges import Judge, JudgeContext, JudgeError, Verdict
from replay.judging._records import CacheKey, JudgmentRecord, judgment_stream, latest_by_key, read_judgments
from replay.trajectory import EpisodeRef, Trajectory, list_episodes, load_trajectory
from schemas import Judgment, LlmCall, NewEvent

log = structlog.get_logger(__name__)

WRITE_BATCH = 200
"""Judgments of cheap (rules) judges appended per transaction; LLM judgments are appended at once."""

LlmFactory = Callable[[], Any]
"""Returns the ``LlmClient`` to judge with; called on first need, so rules-only replays need no endpoint."""


class ReplayAborted(UserError):
    """The batch cannot go on (LLM endpoint down or misconfigured); judgments made so far are kept."""


@dataclass(frozen=True, slots=True)
class JudgeOutcome:
    stream: str
    task_id: str
    level: int | None
    judgment: Judgment
    cached: bool
    event_id: str | None


@dataclass(slots=True)
class ReplaySummary:
    judged: int = 0
    cached: int = 0
    failed: int = 0
    cost_usd: float = 0.0
    outcomes: list[JudgeOutcome] = field(default_factory=list)

    def add(self, outcome: JudgeOutcome) -> None:
        self.outcomes.append(outcome)
        if outcome.cached:
            self.cached += 1
        elif outcome.judgment.status == "failed":
            self.failed += 1
        else:
            self.judged += 1
        if not outcome.cached and outcome.judgment.cost_usd:
            self.cost_usd += outcome.judgment.cost_usd


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


class _Writer:
    """Buffers judgment events for the run's judgment stream; one transaction per batch."""

    def __init__(self, store: Recorder, stream: str) -> None:
        self.store = store
        self.stream = stream
        self.pending: list[NewEvent] = []
        self._lock = asyncio.Lock()

    async def add(self, events: list[NewEvent], *, now: bool) -> None:
        async with self._lock:
            self.pending.extend(events)
            if now or len(self.pending) >= WRITE_BATCH:
                await self._flush()

    async def flush(self) -> None:
        async with self._lock:
            await self._flush()

    async def _flush(self) -> None:
        if self.pending:
            batch, self.pending = self.pending, []
            await self.store.append(batch)


class _Replay:
    def __init__(
        self,
        store: Recorder,
        run_id: str,
        judges: Sequence[Judge],
        llm: LlmFactory | None,
        force: bool,
        on_outcome: Callable[[JudgeOutcome], None] | None,
    ) -> None:
        self.store = store
        self.judges = judges
        self.llm_factory = llm
        self._llm: Any = None
        self.force = force
        self.on_outcome = on_outcome
        self.stream = judgment_stream(run_id)
        self.writer = _Writer(store, self.stream)
        self.summary = ReplaySummary()
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

    def _report(self, outcome: JudgeOutcome) -> None:
        self.summary.add(outcome)
        if self.on_outcome is not None:
            self.on_outcome(outcome)

    async def judge_one(self, judge: Judge, t: Trajectory, key: CacheKey) -> None:
        calls: list[LlmCall] = []

        async def sink(call: LlmCall) -> None:
            calls.append(call)

        scoped = None
        try:
            scoped = self.llm().scoped(sink) if judge.needs_llm(t) else None
            verdict = await judge.judge(t, JudgeContext(get_blob=self.store.get_blob, llm=scoped))
        except JudgeError as exc:
            verdict = Verdict.failed(str(exc), cost_usd=scoped.totals.cost_usd if scoped else None)
        except LlmBadResponse as exc:  # a judge that did not catch it itself: still a failed judgment
            verdict = Verdict.failed(str(exc), cost_usd=scoped.totals.cost_usd if scoped else None)
        except LlmError as exc:
            await self._keep_calls(calls, t)
            raise ReplayAborted(
                f"{exc} (judge {judge.id}, episode {t.stream}); judgments made so far are kept"
            ) from None
        judgment = to_judgment(judge, t, key, verdict)
        previous = self.latest.get(key)
        failed_again = previous is not None and judgment.status == "failed" == previous.judgment.status
        if failed_again and previous.judgment.error == judgment.error and not self.force and not calls:
            self._report(JudgeOutcome(t.stream, t.task_id, t.level, previous.judgment, True, previous.event_id))
            return
        events = [NewEvent(stream=self.stream, payload=call, causation_id=t.last_event_id) for call in calls]
        event = NewEvent(stream=self.stream, payload=judgment, causation_id=t.last_event_id)
        await self.writer.add([*events, event], now=bool(calls))
        self._report(JudgeOutcome(t.stream, t.task_id, t.level, judgment, False, event.event_id))

    async def _keep_calls(self, calls: list[LlmCall], t: Trajectory) -> None:
        """Failed attempts are facts too: record them even when the batch stops."""
        events = [NewEvent(stream=self.stream, payload=call, causation_id=t.last_event_id) for call in calls]
        await self.writer.add(events, now=True)

    async def run(self, run_id: str, concurrency: int) -> ReplaySummary:
        self.latest = latest_by_key(await read_judgments(self.store, run_id))
        slots = asyncio.Semaphore(max(1, concurrency))
        tasks: set[asyncio.Task[None]] = set()
        failure: list[BaseException] = []

        async def bounded(judge: Judge, t: Trajectory, key: CacheKey) -> None:
            try:
                await self.judge_one(judge, t, key)
            except BaseException as exc:
                failure.append(exc)
            finally:
                slots.release()

        try:
            for episode in await list_episodes(self.store, run_id):
                pending = []
                for judge in self.judges:
                    key = cache_key(judge, episode)
                    cached = self.latest.get(key)
                    if not self.force and cached is not None and cached.judgment.status == "ok":
                        outcome = JudgeOutcome(
                            episode.stream, episode.task_id, episode.level, cached.judgment, True, cached.event_id
                        )
                        self._report(outcome)
                    else:
                        pending.append(judge)
                if not pending:
                    continue  # all cached: the episode's events are not even read
                t = await load_trajectory(self.store, episode.stream)
                for judge in pending:
                    if failure:
                        raise failure[0]
                    key = cache_key(judge, t)  # the episode may have grown since it was listed
                    if judge.needs_io(t):
                        await slots.acquire()
                        task = asyncio.create_task(bounded(judge, t, key))
                        tasks.add(task)
                        task.add_done_callback(tasks.discard)
                    else:
                        await self.judge_one(judge, t, key)
            if tasks:
                await asyncio.gather(*tasks)
            if failure:
                raise failure[0]
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
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
    on_outcome: Callable[[JudgeOutcome], None] | None = None,
) -> ReplaySummary:
    """Judge every episode of ``run_id`` with each of ``judges``; ``on_outcome`` sees each result as it lands."""
    log.info("replay.start", run_id=run_id, judges=[j.id for j in judges], force=force)
    summary = await _Replay(store, run_id, judges, llm, force, on_outcome).run(run_id, concurrency)
    log.info("replay.done", run_id=run_id, judged=summary.judged, cached=summary.cached, failed=summary.failed)
    return summary
