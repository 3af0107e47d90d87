"""Classifications in the store: one ``{run_id}/classifications`` stream per run, read back as records.

Like judgments, classifications never go to an episode's own stream, so classifying never
changes the trajectory hash they are keyed by.
"""

from __future__ import annotations

from dataclasses import dataclass

from p2w_runtime.store import CLASSIFICATION_STREAM_SUFFIX, Recorder
from schemas import ErrorClassified

CacheKey = tuple[str, str, str, str]
"""(trajectory hash, classifier id, classifier version, config hash)."""


def classification_stream(run_id: str) -> str:
    return f"{run_id}{CLASSIFICATION_STREAM_SUFFIX}"


@dataclass(frozen=True, slots=True)
class ClassificationRecord:
    event_id: str
    recorded_at: str
    classification: ErrorClassified

    @property
    def key(self) -> CacheKey:
        c = self.classification
        return (c.trajectory_hash, c.classifier_id, c.classifier_version, c.config_hash)


async def read_classifications(store: Recorder, run_id: str) -> list[ClassificationRecord]:
    """Every classification of a run, oldest first (nothing is overwritten)."""
    records: list[ClassificationRecord] = []
    async for stored in store.read_stream(classification_stream(run_id)):
        if stored.type != "error.classified":
            continue
        payload = stored.decode().payload
        assert isinstance(payload, ErrorClassified)
        records.append(ClassificationRecord(stored.event_id, stored.recorded_at, payload))
    return records


def latest_ok(records: list[ClassificationRecord]) -> dict[CacheKey, ClassificationRecord]:
    """The latest successful classification per cache key: what a new pass may reuse."""
    latest: dict[CacheKey, ClassificationRecord] = {}
    for record in records:
        if record.classification.status == "ok":
            latest[record.key] = record
    return latest
