"""What every classifier is: an id, a version, a hashed configuration, and ``classify(trajectory)``.

Classifications are cached like judgments, by (trajectory hash, classifier id, classifier
version, config hash): the version changes whenever the rules change, and ``config()`` holds
every setting that can change a label (model, prompt hash, thresholds, site lists).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

from p2w_runtime.errors import UserError
from p2w_runtime.llm import Sink
from replay.classify._labels import NAVIGATION_LABELS
from replay.trajectory import Trajectory
from schemas import ErrorLabel, Evidence, content_hash


class UnknownClassifier(UserError):
    """``--classifier ID`` names no classifier."""


@dataclass(slots=True)
class Verdict:
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


class Classifier(ABC):
    id: ClassVar[str]
    version: ClassVar[str]
    description: ClassVar[str] = ""
    uses_llm: ClassVar[bool] = False

    @abstractmethod
    def config(self) -> dict[str, Any]:
        """The settings this classifier's labels depend on (hashed into the cache key)."""

    def config_hash(self) -> str:
        return content_hash({"classifier": self.id, "config": self.config()})

    @abstractmethod
    async def classify(self, trajectory: Trajectory, sink: Sink) -> Verdict:
        """Label one episode; LLM calls go to ``sink``. An unusable model answer is a failed verdict."""

    async def aclose(self) -> None:
        """Release what the classifier opened (an LLM client); most open nothing."""
        return None
