"""SQLModel table definitions shared by every SQL backend."""

from __future__ import annotations

from sqlalchemy import Column, Index, LargeBinary, Text, UniqueConstraint
from sqlmodel import Field, SQLModel


class EventRow(SQLModel, table=True):
    """One event. ``payload`` is the canonical JSON text the hash was computed over."""

    __tablename__ = "events"
    __table_args__ = (
        UniqueConstraint("stream", "seq", name="uq_events_stream_seq"),
        Index("ix_events_type", "type"),
    )

    position: int | None = Field(default=None, primary_key=True)
    event_id: str = Field(unique=True)
    stream: str
    seq: int
    type: str
    schema_version: int
    recorded_at: str
    causation_id: str | None = None
    payload: str = Field(sa_column=Column(Text, nullable=False))
    blobs: str = Field(sa_column=Column(Text, nullable=False))
    prev_hash: str
    hash: str


class BlobRow(SQLModel, table=True):
    """A content-addressed blob: sha256 of the raw bytes, stored zstd-compressed."""

    __tablename__ = "blobs"

    sha256: str = Field(primary_key=True)
    size: int
    codec: str = "zstd"
    data: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
