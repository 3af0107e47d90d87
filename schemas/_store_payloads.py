"""Payloads about a store rather than a run: what ``p2w-rt verify`` remembers (docs/design/integrity.md,
"Incremental verify")."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from p2w_rt.schemas._payload_base import Payload


class StoreVerified(Payload):
    """Appended to the store's own ``p2w-rt.verified`` stream by a whole-store ``verify`` that found nothing wrong:
    the point it checked through, so the next one checks what follows and that what preceded is still there.

    Never a rewrite: each one is chained like any event, and the next ``verify`` checks it with the new events."""

    type: Literal["store.verified"] = "store.verified"
    position: int = Field(ge=0, description="The log position checked through.")
    events: int = Field(ge=0, description="Events at or before ``position``.")
    blobs: int = Field(ge=0, description="Blobs stored when the check began (blobs are never removed).")
    streams: int = Field(ge=0, description="Streams with events at or before ``position``.")
    heads: str = Field(description="sha256 over every such stream's (stream, last seq, last hash), by stream.")
    full: bool = Field(description="Whether every event was checked, or only those after ``since``.")
    since: int = Field(default=0, ge=0, description="The position of the mark an incremental check started after.")
    uncovered: dict[str, int] = Field(
        default_factory=dict, description="Stream of a run -> its events after its last seal (none: left out)."
    )
    unsealed: list[str] = Field(default_factory=list, description="Runs no seal covers.")
    runs: list[str] = Field(default_factory=list, description="Every run checked (a run's ``run.started`` stream).")
    signed_by: str | None = Field(default=None, description="The Ed25519 public key (raw, base64) that signed it.")
    signature: str | None = Field(default=None, description="Ed25519 signature (base64) over the other fields.")
