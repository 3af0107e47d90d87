"""Classifications in the store: one ``{run_id}/classifications`` stream per run, read back as records.

Like judgments, classifications never go to an episode's own stream, so classifying never
changes the trajectory hash they are keyed by.
"""

from __future__ import annotations

from dataclasses import dataclass

from p2w_rt.replay.derived import CacheKey, DerivedRecord, DerivedStream
from p2w_rt.schemas import ErrorClassified
from p2w_runtime.domain import CLASSIFICATIONS_SUFFIX
from p2w_runtime.store import EventStore


@dataclass(frozen=True, slots=True)
class ClassificationRecord(DerivedRecord[ErrorClassified]):
    @property
    def classification(self) -> ErrorClassified:
        return self.payload

    @property
    def key(self) -> CacheKey:
        c = self.payload
        return (c.trajectory_hash, c.classifier_id, c.classifier_version, c.config_hash)


CLASSIFICATIONS = DerivedStream(CLASSIFICATIONS_SUFFIX, "error.classified", ErrorClassified, ClassificationRecord)
classification_stream = CLASSIFICATIONS.name
read_classifications = CLASSIFICATIONS.read
"""Every classification of a run, oldest first (nothing is overwritten)."""


async def current_classifications(store: EventStore, run_id: str) -> dict[tuple[str, str], ClassificationRecord]:
    """The latest successful classification per (episode stream, classifier) of the episode as it is now."""
    return await CLASSIFICATIONS.current(store, run_id)
