"""SQLAlchemy Core and the SQLModel tables, imported when a statement is first built, not when the store is.

Importing SQLAlchemy (its ORM comes with SQLModel) and declaring the tables was half of what ``p2w-rt runs``
executed (1,000 M of 1,970 M instructions); a SQLite store that runs only statements compiled ahead
(``sqlite_statements.json``: a listing) never imports them (docs/design/startup.md, fourth round). The store's
modules reach SQLAlchemy through ``_sqlalchemy.sa`` (``sa.select``) and the tables through this module's attributes
(``core.EVENTS``), both resolved at first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from p2w_rt.schemas import ChainedEvent

if TYPE_CHECKING:
    from sqlalchemy import Column, Table

    EVENTS: Table
    BLOBS: Table
    RUN_LABELS: Table
    CLAIMS: Table
    WORK_ITEMS: Table
    SUMMARIES: Table
    MARKS: Table
    SEGMENTS: Table
    EVENT_COLUMNS: tuple[Column[Any], ...]
    """The columns readers select, in the order ``row_to_event`` unpacks them (``EVENT_FIELDS``)."""
    CHAINED_COLUMNS: tuple[Column[Any], ...]
    """The columns ``read_chained`` selects: a row of them is a ``ChainedEvent``'s fields, in order."""

LIFECYCLE_TYPES = ("run.started", "run.finished", "episode.started", "episode.finished")
"""A run's and an episode's start and end: what the run and episode summaries fold (``p2w_runtime.domain``), and
what a full ``verify`` of the whole store hands their check so that it need not read the log again."""
TYPE_INDEXED = LIFECYCLE_TYPES
"""The event types SQLite indexes by type (``ix_events_lifecycle``): a few an episode, read by type across the whole
store (the summaries' first build, the viewer's search). A step's types are not indexed: their index entries made
~40 % of a per-step append's SQLite work, and their typed reads are a run's (docs/design/store.md, "Appends, fifth
round")."""
TYPE_INDEXED_SQL = "({})".format(" OR ".join(f"type = '{t}'" for t in TYPE_INDEXED))
"""The partial index's condition. A query may use the index only if its own WHERE holds this very term (SQLite's
rule for partial indexes), so a typed read of these types adds it as written. Equalities, not ``type IN (...)``:
SQLite evaluates a list of more than two values through a temporary b-tree it builds again for every row inserted,
which cost more than the index saved."""

EVENT_FIELDS = (
    "event_id", "stream", "seq", "position", "type", "schema_version", "recorded_at", "causation_id", "payload",
    "blobs", "prev_hash", "hash",
)  # fmt: skip
"""The names of ``EVENT_COLUMNS``, known without the tables."""
CHAINED_FIELDS = tuple("payload" if name == "payload_json" else name for name in ChainedEvent._fields)
"""The names of ``CHAINED_COLUMNS``: ``ChainedEvent``'s fields, its ``payload_json`` being the ``payload`` column."""
_TABLES = {
    "EVENTS": "events", "BLOBS": "blobs", "RUN_LABELS": "run_labels", "CLAIMS": "claims", "WORK_ITEMS": "work_items",
    "SUMMARIES": "summaries", "MARKS": "summary_marks", "SEGMENTS": "segments",
}  # fmt: skip


def __getattr__(name: str) -> Any:
    if name not in _TABLES and name not in ("EVENT_COLUMNS", "CHAINED_COLUMNS"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from p2w_runtime.store._tables import EventRow  # declares every table of the metadata

    tables = EventRow.metadata.tables  # SQLModel's ``__table__`` is untyped; the metadata's tables are ``Table``s
    handles: dict[str, Any] = {handle: tables[table] for handle, table in _TABLES.items()}
    events = handles["EVENTS"]
    handles["EVENT_COLUMNS"] = tuple(events.c[field] for field in EVENT_FIELDS)
    handles["CHAINED_COLUMNS"] = tuple(events.c[field] for field in CHAINED_FIELDS)
    globals().update(handles)
    return handles[name]
