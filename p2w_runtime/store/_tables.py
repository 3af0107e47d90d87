"""SQLModel table definitions shared by every SQL backend."""

from __future__ import annotations

from sqlalchemy import Column, Index, LargeBinary, Text, UniqueConstraint
from sqlmodel import Field, SQLModel


class EventRow(SQLModel, table=True):
    """One event. ``payload`` is the canonical JSON text the hash was computed over."""

    __tablename__ = "events"
    __table_args__ = (
        UniqueConstraint("stream", "seq", name="uq_events_stream_seq"),
        # PostgreSQL indexes every type; SQLite only the lifecycle types, as a partial index it adds itself
        # (``_sqlite_schema.py``, ``INDEXES``): SQLAlchemy would not drop the full index from a database made before.
        Index("ix_events_type", "type").ddl_if(dialect="postgresql"),
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


class RunLabelRow(SQLModel, table=True):
    """Which run holds a label. The primary key makes a label unique per database: two processes creating a run
    under one label cannot both commit, whatever they checked before (docs/design/concurrency.md)."""

    __tablename__ = "run_labels"

    label: str = Field(primary_key=True)
    run_id: str


class ClaimRow(SQLModel, table=True):
    """Who is doing a piece of work that must not be done twice at once (an import under a label, a judging pass).

    Coordination state, not a fact: released claims are deleted, stale ones taken over, so no append-only trigger.
    """

    __tablename__ = "claims"

    key: str = Field(primary_key=True)
    owner: str
    host: str
    pid: int
    claimed_at: float


class WorkItemRow(SQLModel, table=True):
    """One task of a run recorded by workers (``record --worker``): who holds it and until when.

    Coordination state like ``claims``: rows are updated (lease renewed, done set), so no append-only trigger.
    ``lease_until`` is a Unix time; a worker killed without finishing stops renewing it and, once it has passed,
    the next worker takes the task over.
    """

    __tablename__ = "work_items"

    run_id: str = Field(primary_key=True)
    task_id: str = Field(primary_key=True)
    owner: str | None = None
    host: str | None = None
    pid: int | None = None
    lease_until: float = 0.0
    done: bool = False


class SummaryRow(SQLModel, table=True):
    """A row of a read model kept beside the log (``read_summaries``): what a view lists without scanning events.

    Not a fact: rebuilt from the log whenever asked (``clear_summaries``), so rows are replaced and no append-only
    trigger guards them. ``body`` is the owner's JSON text; the store never reads it (docs/design/summaries.md).
    """

    __tablename__ = "summaries"
    __table_args__ = (Index("ix_summaries_group", "kind", "grp", "ordinal"),)

    kind: str = Field(primary_key=True)
    key: str = Field(primary_key=True)
    grp: str
    ordinal: int
    body: str = Field(sa_column=Column(Text, nullable=False))


class SummaryMarkRow(SQLModel, table=True):
    """The log position a read model's rows are current to: its owner reads the events after it, and only a
    writer that found the mark where it read it may move it (``write_summaries``)."""

    __tablename__ = "summary_marks"

    model: str = Field(primary_key=True)
    position: int


class SegmentRow(SQLModel, table=True):
    """A run of one stream's events written together, stored as one compressed row instead of one row each.

    Events ``first_seq..last_seq`` of ``stream`` at positions ``first_position..last_position`` (contiguous when
    written instead of rows; a compacted episode's, made from its rows, record their own, ``SPARSE_CODEC``).
    ``data`` is the events' stored form (``_segments.py``), zstd-compressed; each event's hash is recomputed from it
    when read, except the last one's, which is ``head_hash``: a changed byte anywhere breaks that link and fails
    ``verify`` (docs/design/store.md, "Segments", "Compaction").
    """

    __tablename__ = "segments"
    __table_args__ = (
        UniqueConstraint("stream", "last_seq", name="uq_segments_stream_last_seq"),
        Index("ix_segments_last_position", "last_position", unique=True),
    )

    first_position: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    last_position: int
    stream: str
    first_seq: int
    last_seq: int
    prev_hash: str
    """The ``prev_hash`` of its first event: the link to what precedes the segment in its stream."""
    head_hash: str
    last_type: str
    codec: str
    data: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
