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
LlmRole = Literal["planner", "generator", "judge", "classifier"]


class Payload(BaseModel):
    """Base of all payloads: immutable, strict about unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False, defer_build=True)
    SCHEMA_VERSION: ClassVar[int] = 1

    type: str

    def blob_hashes(self) -> list[BlobHash]:
        """Blobs this payload references; the envelope lists them for integrity checks."""
        return []
