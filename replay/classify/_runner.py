"""Classify every episode of a run: cached, concurrent for LLM classifiers, appended, never overwritten.

A classification is a cache hit when a successful one with the same (trajectory hash,
classifier id, classifier version, config hash) exists: nothing is called, nothing appended.
A failed one (unusable model answer) is appended with its calls and retried next time.
``force`` classifies again and appends; older classifications stay. Appending and concurrency
are ``replay.derived``'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import structlog

from p2w_runtime.errors import UserError
from p2w_runtime.llm import LlmError
from p2w_runtime.store import Recorder
from replay.classify._base import Classifier, Verdict
from replay.classify._records import classification_stream, read_classifications
from replay.derived import CacheKey, DerivedPass, Outcome, Pool, Tally, call_log, latest_ok, pass_claim
from replay.trajectory import Trajectory, load_trajectories
from schemas import ErrorClassified

log = structlog.get_logger(__name__)


class ClassifyAborted(UserError):
    """The batch cannot go on (LLM endpoint down or misconfigured); classifications made so far are kept."""


@dataclass(frozen=True, slots=True)
class ClassifyOutcome(Outcome[ErrorClassified]):
    @property
    def classification(self) -> ErrorClassified:
        return self.payload


@dataclass(slots=True)
class ClassifySummary(Tally[ClassifyOutcome]):
    run_id: str
    classifier_id: str

    @property
    def classified(self) -> int:
        return self.new


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


class _Batch(DerivedPass[ClassifyOutcome, ClassifySummary]):
    def __init__(
        self,
        store: Recorder,
        run_id: str,
        classifier: Classifier,
        force: bool,
        on_outcome: Callable[[ClassifyOutcome], None] | None,
    ) -> None:
        summary = ClassifySummary(run_id, classifier.id)
        super().__init__(store, classification_stream(run_id), summary, force=force, on_outcome=on_outcome)
        self.classifier = classifier

    async def one(self, t: Trajectory, key: CacheKey) -> None:
        calls, sink = call_log()
        try:
            verdict = await self.classifier.classify(t, sink)
        except LlmError as exc:
            await self.writer.keep_calls(t, calls)
            raise ClassifyAborted(
                f"{exc} (classifier {self.classifier.id}, episode {t.stream}); classifications made so far are kept"
            ) from None
        payload = to_event(self.classifier, t, key, verdict)
        event_id = await self.writer.append(t, calls, payload)
        self.report(ClassifyOutcome.of(t, payload, cached=False, event_id=event_id))

    async def run(self, run_id: str, concurrency: int) -> ClassifySummary:
        latest = {} if self.force else latest_ok(await read_classifications(self.store, run_id))
        seen: dict[str, int] = {}
        try:
            async with Pool(concurrency) as pool:
                async for t in load_trajectories(self.store, run_id):
                    seen[t.stream] = len(seen)
                    pool.check()
                    key = cache_key(self.classifier, t)
                    if (record := latest.get(key)) is not None:
                        self.report(ClassifyOutcome.of(t, record.classification, cached=True, event_id=record.event_id))
                    elif self.classifier.uses_llm:
                        await pool.start(self.one, t, key)
                    else:
                        await self.one(t, key)
                await pool.join()
        finally:
            await self.writer.flush()
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
    batch = _Batch(store, run_id, classifier, force, on_outcome)
    claim = pass_claim("classify", run_id, classifier.id, classifier.version, classifier.config())
    async with batch.exclusive([claim]):  # a concurrent pass with the same config waits, then finds it cached
        summary = await batch.run(run_id, concurrency)
    log.info(
        "classify.done", run_id=run_id, classified=summary.classified, cached=summary.cached, failed=summary.failed
    )
    return summary
