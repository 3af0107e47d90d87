"""Classify every episode of a run: cached, concurrent for LLM classifiers, appended, never overwritten.

A classification is a cache hit when a successful one with the same (trajectory hash,
classifier id, classifier version, config hash) exists: nothing is called, nothing appended.
A failed one (unusable model answer) is appended with its calls and retried next time.
``force`` classifies again and appends; older classifications stay.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

import structlog

from p2w_runtime.errors import UserError
from p2w_runtime.llm import LlmError
from p2w_runtime.store import Recorder
from replay.classify._base import Classifier, Verdict
from replay.classify._records import (
    CacheKey,
    ClassificationRecord,
    classification_stream,
    latest_ok,
    read_classifications,
)
from replay.trajectory import Trajectory, load_trajectories
from schemas import ErrorClassified, LlmCall, NewEvent

log = structlog.get_logger(__name__)

WRITE_BATCH = 200
"""Rules classifications appended per transaction; LLM classifications are appended as they land."""


class ClassifyAborted(UserError):
    """The batch cannot go on (LLM endpoint down or misconfigured); classifications made so far are kept."""


@dataclass(frozen=True, slots=True)
class ClassifyOutcome:
    stream: str
    task_id: str
    level: int | None
    classification: ErrorClassified
    cached: bool
    event_id: str | None


@dataclass(slots=True)
class ClassifySummary:
    run_id: str
    classifier_id: str
    classified: int = 0
    cached: int = 0
    failed: int = 0
    outcomes: list[ClassifyOutcome] = field(default_factory=list)

    def add(self, outcome: ClassifyOutcome) -> None:
        self.outcomes.append(outcome)
        if outcome.cached:
            self.cached += 1
        elif outcome.classification.status == "failed":
            self.failed += 1
        else:
            self.classified += 1


def cache_key(classifier: Classifier, t: Trajectory) -> CacheKey:
    return (t.hash, classifier.id, classifier.version, classifier.config_hash())


def to_event(classifier: Classifier, t: Trajectory, key: CacheKey, verdict: Verdict) -> ErrorClassified:
    return ErrorClassified(
        episode_stream=t.stream,
        task_id=t.task_id,
        trajectory_hash=t.hash,
        classifier_id=classifier.id,
        classifier_version=classifier.version,
        config_hash=key[3],
        labels=verdict.labels,
        status="ok" if verdict.status == "ok" else "failed",
        error=verdict.error,
    )


class _Batch:
    def __init__(
        self,
        store: Recorder,
        run_id: str,
        classifier: Classifier,
        force: bool,
        on_outcome: Callable[[ClassifyOutcome], None] | None,
    ) -> None:
        self.store = store
        self.classifier = classifier
        self.force = force
        self.on_outcome = on_outcome
        self.stream = classification_stream(run_id)
        self.summary = ClassifySummary(run_id, classifier.id)
        self.pending: list[NewEvent] = []
        self.lock = asyncio.Lock()

    async def write(self, events: list[NewEvent], *, now: bool) -> None:
        async with self.lock:
            self.pending.extend(events)
            if self.pending and (now or len(self.pending) >= WRITE_BATCH):
                batch, self.pending = self.pending, []
                await self.store.append(batch)

    def report(self, outcome: ClassifyOutcome) -> None:
        self.summary.add(outcome)
        if self.on_outcome is not None:
            self.on_outcome(outcome)

    async def one(self, t: Trajectory, key: CacheKey) -> None:
        calls: list[LlmCall] = []

        async def sink(call: LlmCall) -> None:
            calls.append(call)

        try:
            verdict = await self.classifier.classify(t, sink)
        except LlmError as exc:
            await self.write(
                [NewEvent(stream=self.stream, payload=c, causation_id=t.last_event_id) for c in calls], now=True
            )
            raise ClassifyAborted(
                f"{exc} (classifier {self.classifier.id}, episode {t.stream}); classifications made so far are kept"
            ) from None
        payload = to_event(self.classifier, t, key, verdict)
        events = [NewEvent(stream=self.stream, payload=c, causation_id=t.last_event_id) for c in calls]
        event = NewEvent(stream=self.stream, payload=payload, causation_id=t.last_event_id)
        await self.write([*events, event], now=bool(calls))
        self.report(ClassifyOutcome(t.stream, t.task_id, t.level, payload, False, event.event_id))

    def hit(self, t: Trajectory, record: ClassificationRecord) -> None:
        self.report(ClassifyOutcome(t.stream, t.task_id, t.level, record.classification, True, record.event_id))

    async def run(self, run_id: str, concurrency: int) -> ClassifySummary:
        latest = {} if self.force else latest_ok(await read_classifications(self.store, run_id))
        slots = asyncio.Semaphore(max(1, concurrency))
        tasks: set[asyncio.Task[None]] = set()
        failure: list[BaseException] = []

        async def bounded(t: Trajectory, key: CacheKey) -> None:
            try:
                await self.one(t, key)
            except BaseException as exc:
                failure.append(exc)
            finally:
                slots.release()

        seen: dict[str, int] = {}
        try:
            async for t in load_trajectories(self.store, run_id):
                seen[t.stream] = len(seen)
                if failure:
                    raise failure[0]
                key = cache_key(self.classifier, t)
                if (record := latest.get(key)) is not None:
                    self.hit(t, record)
                elif self.classifier.uses_llm:
                    await slots.acquire()
                    task = asyncio.create_task(bounded(t, key))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
                else:
                    await self.one(t, key)
            if tasks:
                await asyncio.gather(*tasks)
            if failure:
                raise failure[0]
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await self.write([], now=True)
        self.summary.outcomes.sort(key=lambda o: seen.get(o.stream, len(seen)))
        return self.summary


async def classify_run(
    store: Recorder,
    run_id: str,
    classifier: Classifier,
    *,
    concurrency: int = 8,
    force: bool = False,
    on_outcome: Callable[[ClassifyOutcome], None] | None = None,
) -> ClassifySummary:
    """Classify every episode of ``run_id``; ``on_outcome`` sees each result as it lands (cached ones too)."""
    log.info("classify.start", run_id=run_id, classifier=classifier.id, force=force)
    summary = await _Batch(store, run_id, classifier, force, on_outcome).run(run_id, concurrency)
    log.info(
        "classify.done", run_id=run_id, classified=summary.classified, cached=summary.cached, failed=summary.failed
    )
    return summary
