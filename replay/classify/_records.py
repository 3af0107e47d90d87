"""Classifications in the store: one ``{run_id}/classifications`` stream per run, read back as records.

Like judgments, classifications never go to an episode's own stream, so classifying never
changes the trajectory hash they are keyed by.
"""

from __future__ import annotations

from dataclasses import dataclass

from p2w_runtime.domain import CLASSIFICATIONS_SUFFIX
from replay.derived import CacheKey, DerivedRecord, DerivedStream
from schemas import ErrorClassified


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
