"""Classifications in the store: one ``{run_id}/classifications`` stream per run, read back as records, whole or as
their labels' names only.

Like judgments, classifications never go to an episode's own stream, so classifying never
changes the trajectory hash they are keyed by.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from p2w_rt.replay.derived import DerivedRecord, DerivedStream, NarrowResult, narrow_decode
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


class LabelName(BaseModel):
    """An ``ErrorLabel``'s name; its explanation and evidence, most of a classification's text, are skipped."""

    model_config = ConfigDict(frozen=True, extra="ignore", defer_build=True)

    label: str


class ClassificationLabels(NarrowResult):
    """The fields of an ``ErrorClassified`` a table of labels reads (the viewer's run page, its filters)."""

    type: Literal["error.classified"] = "error.classified"
    classifier_id: str
    classifier_version: str
    labels: list[LabelName]


@dataclass(frozen=True, slots=True)
class LabelsRecord(DerivedRecord[ClassificationLabels]):
    kind = "classifier"

    @property
    def classification(self) -> ClassificationLabels:
        return self.payload


CLASSIFICATION_LABELS = DerivedStream(
    CLASSIFICATIONS_SUFFIX,
    "error.classified",
    ClassificationLabels,
    LabelsRecord,
    narrow_decode(ClassificationLabels, ErrorClassified.SCHEMA_VERSION),
)
read_labels = CLASSIFICATION_LABELS.read
"""Every classification of a run as its labels' names, oldest first: a few times cheaper than ``read_classifications``
on a large run (docs/design/view.md)."""
