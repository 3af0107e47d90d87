"""Classify every episode of a run: the ``classifier`` family's pass (``replay.derived``).

Caching, appending and concurrency are ``replay.derived.ProducerPass``'s. A failed classification (an
unusable model answer) is appended with its calls and made again next time (``retry_failed``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import structlog

from p2w_runtime.errors import UserError
from p2w_runtime.store import EventStore
from replay.classify._base import Classifier
from replay.classify._records import CLASSIFICATIONS
from replay.derived import LlmFactory, Outcome, PassKind, ProducerPass, Tally
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


CLASSIFYING = PassKind(CLASSIFICATIONS, ClassifyOutcome, ClassifyAborted, "classifications")


async def classify_run(
    store: EventStore,
    run_id: str,
    classifier: Classifier,
    *,
    llm: LlmFactory | None = None,
    concurrency: int = 8,
    force: bool = False,
    on_outcome: Callable[[ClassifyOutcome], None] | None = None,
) -> ClassifySummary:
    """Classify every episode of ``run_id``; ``on_outcome`` sees each result as it lands (cached ones too)."""
    log.info("classify.start", run_id=run_id, classifier=classifier.id, force=force)
    summary = ClassifySummary(run_id, classifier.id)
    batch = ProducerPass(
        store,
        run_id,
        [classifier],
        CLASSIFYING,
        summary,
        llm=llm,
        force=force,
        retry_failed=True,
        on_outcome=on_outcome,
    )
    await batch.run(concurrency)
    log.info(
        "classify.done", run_id=run_id, classified=summary.classified, cached=summary.cached, failed=summary.failed
    )
    return summary
