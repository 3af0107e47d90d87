"""Classifications in the store: one ``{run_id}/classifications`` stream per run, read back as records.

Like judgments, classifications never go to an episode's own stream, so classifying never
changes the trajectory hash they are keyed by.
"""

from __future__ import annotations

from dataclasses import dataclass

from p2w_rt.replay.derived import DerivedRecord, DerivedStream
from p2w_rt.schemas import ErrorClassified
from p2w_runtime.domain import CLASSIFICATIONS_SUFFIX


@dataclass(frozen=True, slots=True)
class ClassificationRecord(DerivedRecord[ErrorClassified]):
    kind = "classifier"

    @property
    def classification(self) -> ErrorClassified:
        return self.payload


CLASSIFICATIONS = DerivedStream(CLASSIFICATIONS_SUFFIX, "error.classified", ErrorClassified, ClassificationRecord)
classification_stream = CLASSIFICATIONS.name
read_classifications = CLASSIFICATIONS.read
"""Every classification of a run, oldest first (nothing is overwritten)."""
current_classifications = CLASSIFICATIONS.current
"""The latest successful classification per (episode stream, classifier) of the episode as it is now."""
