"""Persona2Web dataset records: task files, ground truth and memory-bank entries.

These mirror the published file formats; parsing the files lives in
``p2w_runtime.data`` so that ``schemas`` stays free of I/O.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

KNOWN_ENTRY_TYPES = ("web search", "web visit", "purchase", "booking", "review and rating")
"""Entry types of the Persona2Web memory bank; other non-empty types are kept, not rejected."""


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


def entry_key_text(type_: str, object_: str) -> str:
    """The text Persona2Web's runners embed for retrieval, of a history entry's type and object."""
    return f"{type_}: {object_}"


class MemoryEntry(_Record):
    """One browsing-history entry of a persona (the unit the retriever indexes).

    Extra keys some banks carry are kept, not rejected: the four fields are what p2w-rt reads.
    """

    model_config = ConfigDict(frozen=True, extra="allow", defer_build=True)

    timestamp: str = Field(min_length=1)
    type: str = Field(min_length=1)
    object: str = Field(min_length=1)
    website: str = ""

    def key_text(self) -> str:
        return entry_key_text(self.type, self.object)


class Location(_Record):
    """A trailing ``(City, ST ZIP)`` of a level-0 query."""

    city: str
    state: str
    zip: str | None = None
    raw: str


class GroundTruth(_Record):
    """What a level-0 query says explicitly; the answer key for levels 1 and 2."""

    website: str
    websites: list[str] = Field(description="All alternatives named (``a.com or b.com``), in order.")
    preferences: list[str]
    location: Location | None = None


class TaskFile(BaseModel):
    """A Persona2Web task file exactly as the public runners publish it."""

    model_config = ConfigDict(frozen=True, extra="allow", defer_build=True)

    sites: list[str]
    task_id: str
    require_login: bool = False
    storage_state: str | None = None
    start_url: str
    geolocation: dict[str, Any] | str | None = None
    intent: str
    require_reset: bool = False
