"""What every classifier is: a producer (``replay.derived.Producer``) of ``error.classified`` events.

Classifications are cached like judgments, by (trajectory hash, classifier id, classifier version, config
hash): the version changes whenever the rules change, and the typed config holds every setting that can
change a label (model, prompt hash, thresholds, site lists).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

from p2w_rt.replay.classify._labels import NAVIGATION_LABELS
from p2w_rt.replay.derived import CacheKey, PassSettings, Producer, ProducerConfig
from p2w_rt.schemas import ErrorClassified, ErrorLabel, Evidence
from p2w_runtime.domain.trajectory import Trajectory
from p2w_runtime.errors import UserError

ConfigT = TypeVar("ConfigT", bound=ProducerConfig)


class UnknownClassifier(UserError):
    """``--classifier ID`` names no classifier."""


@dataclass(slots=True)
class ErrorLabels:
    """A classifier's answer for one episode, before it becomes an ``error.classified`` event."""

    labels: list[ErrorLabel] = field(default_factory=list)
    status: str = "ok"
    error: str | None = None


def navigation_label(t: Trajectory) -> ErrorLabel | None:
    """The end reason as its own label when it is a navigation failure (a fact of the log, never guessed)."""
    if t.end_reason not in NAVIGATION_LABELS:
        return None
    detail = f": {t.end_detail}" if t.end_detail else ""
    return ErrorLabel(
        label=t.end_reason,
        explanation=f"the episode ended with '{t.end_reason}'{detail}",
        evidence=Evidence(
            event_ids=[t.finished_event_id] if t.finished_event_id else [],
            text=t.end_detail or "",
            note="episode.finished end_reason",
        ),
    )


class Classifier(Producer[PassSettings, ConfigT, ErrorLabels]):
    """A producer of ``error.classified`` events: labels with evidence."""

    kind = "classifier"

    def failed(self, error: str, cost_usd: float | None) -> ErrorLabels:
        return ErrorLabels(status="failed", error=error)

    def payload(self, trajectory: Trajectory, key: CacheKey, verdict: ErrorLabels) -> ErrorClassified:
        return ErrorClassified.model_validate(
            {**self.keyed(trajectory, key, verdict.status, verdict.error), "labels": verdict.labels}
        )
