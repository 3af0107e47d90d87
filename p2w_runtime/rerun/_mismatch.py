"""What a rerun reports: the first place the re-executed agent decided differently from the recording."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from p2w_runtime.agent import SeamDiverged

MismatchKind = Literal[
    "prompt changed",
    "action differs",
    "history query differs",
    "retrieval hits differ",
    "rationale differs",
    "ends earlier",
    "ends later",
    "outcome differs",
]


@dataclass(frozen=True, slots=True)
class Mismatch:
    step: int | None
    kind: MismatchKind
    recorded: str | None
    reexecuted: str | None
    diff: str | None = None
    """Unified diff of the prompt (recorded -> re-executed) when a prompt changed."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class ReplayedEpisode:
    """One episode re-executed against its recording, by whichever agent: identical, or its first ``mismatch``."""

    stream: str
    task_id: str
    mismatch: Mismatch | None

    @property
    def identical(self) -> bool:
        return self.mismatch is None

    def as_dict(self) -> dict[str, Any]:
        return {
            "stream": self.stream,
            "task_id": self.task_id,
            "identical": self.identical,
            "mismatch": self.mismatch.as_dict() if self.mismatch else None,
        }


class Diverged(SeamDiverged):
    """Raised at a seam (recorded tab or recorded LLM) when the recording cannot answer the re-executed agent.

    The episode loop ends the episode as an error, as it would on a dead browser; ``Divergence`` keeps
    the first mismatch so the report names it rather than that error.
    """

    def __init__(self, mismatch: Mismatch) -> None:
        super().__init__(f"step {mismatch.step}: {mismatch.kind}")
        self.mismatch = mismatch


class Divergence:
    """The first divergence seen at any seam of one re-executed episode."""

    def __init__(self) -> None:
        self.first: Mismatch | None = None

    def raise_(self, mismatch: Mismatch) -> Diverged:
        if self.first is None:
            self.first = mismatch
        return Diverged(mismatch)
