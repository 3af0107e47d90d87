"""What every payload shares: the base model and the literal types used across payloads."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict

BlobHash = str
"""sha256 hex digest of a blob's uncompressed bytes."""

Scheme = Literal["no-history", "on-demand", "pre-execution"]
EndReason = Literal[
    "answered",
    "max_steps",
    "parse_failures",
    "repeated_action",
    "blocked",
    "error",
    "aborted",
    "early_stop",
    "no_answer",
]
FAILURE_END_REASONS: frozenset[str] = frozenset(
    {"max_steps", "parse_failures", "repeated_action", "blocked", "error", "aborted", "early_stop"}
)
NOT_CARRIED_OUT = "not carried out"
"""How the ``error`` of a ``blocked`` action starts when the runner logged the action but never executed it (the
step AgentOccam logs past its step limit; a Browser-Use step that failed and re-wrote the previous output). Any
other ``blocked`` action was refused by the browser (a final confirmation). Judges tell the two apart by it."""
LlmRole = Literal["planner", "generator", "judge", "classifier"]


class Payload(BaseModel):
    """Base of all payloads: immutable, strict about unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False, defer_build=True)
    SCHEMA_VERSION: ClassVar[int] = 1

    type: str

    def blob_hashes(self) -> list[BlobHash]:
        """Blobs this payload references; the envelope lists them for integrity checks."""
        return []
