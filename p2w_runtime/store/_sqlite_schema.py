"""What SQLite adds to the tables SQLAlchemy creates: the append-only triggers, the partial type index, and how a
file is told to be a store of ours (docs/design/store.md). ``SqliteEventStore._set_up`` applies it; ``_ready`` checks
it is all there without SQLAlchemy."""

from __future__ import annotations

from p2w_runtime.store._core import TYPE_INDEXED_SQL
from p2w_runtime.store._segments import COMPACTED_INDEX, COMPACTED_INDEX_NAME

APPEND_ONLY_TRIGGERS = [
    f"CREATE TRIGGER IF NOT EXISTS {table}_no_{verb.lower()} BEFORE {verb} ON {table} "
    f"BEGIN SELECT RAISE(ABORT, '{table} are append-only: {verb} refused'); END"
    for table in ("events", "blobs", "segments")
    for verb in ("UPDATE", "DELETE")
    if (table, verb) != ("events", "DELETE")
] + [
    # compaction (``_sql_compact.py``) deletes the rows of events it has just stored in a segment: no other row goes
    "CREATE TRIGGER IF NOT EXISTS events_delete_held BEFORE DELETE ON events "
    "WHEN NOT EXISTS (SELECT 1 FROM segments WHERE stream = OLD.stream AND last_seq >= OLD.seq "
    "AND first_seq <= OLD.seq) "
    "BEGIN SELECT RAISE(ABORT, 'events are append-only: DELETE refused (only a row a segment holds may go)'); END",
    # INSERT OR REPLACE (and REPLACE INTO) delete the conflicting row without firing DELETE triggers, so an
    # insert that would meet an existing event is refused before conflict resolution. Three lookups, each on
    # its own index. An existing blob is kept and the insert skipped: content addressing means a second copy
    # of a hash has nothing to add, and our own inserts race other writers on the same blobs.
    "CREATE TRIGGER IF NOT EXISTS events_no_replace BEFORE INSERT ON events "
    "WHEN EXISTS (SELECT 1 FROM events WHERE position = NEW.position) "
    "OR EXISTS (SELECT 1 FROM events WHERE event_id = NEW.event_id) "
    "OR EXISTS (SELECT 1 FROM events WHERE stream = NEW.stream AND seq = NEW.seq) "
    "BEGIN SELECT RAISE(ABORT, "
    "'events are append-only: an event with this position, event_id or stream seq exists (no REPLACE)'); END",
    "CREATE TRIGGER IF NOT EXISTS segments_no_replace BEFORE INSERT ON segments "
    "WHEN EXISTS (SELECT 1 FROM segments WHERE first_position = NEW.first_position) "
    "OR EXISTS (SELECT 1 FROM segments WHERE last_position = NEW.last_position) "
    "OR EXISTS (SELECT 1 FROM segments WHERE stream = NEW.stream AND last_seq = NEW.last_seq) "
    "BEGIN SELECT RAISE(ABORT, "
    "'segments are append-only: a segment with this position or stream seq exists (no REPLACE)'); END",
    "CREATE TRIGGER IF NOT EXISTS blobs_keep_first BEFORE INSERT ON blobs "
    "WHEN EXISTS (SELECT 1 FROM blobs WHERE sha256 = NEW.sha256) BEGIN SELECT RAISE(IGNORE); END",
]
"""The triggers that keep ``events``, ``blobs`` and ``segments`` append-only against any writer, ours or not."""

TYPE_INDEX = "ix_events_lifecycle"
_EVERY_TYPE_INDEX = "ix_events_type"
"""The index of every type that files made before ``TYPE_INDEX`` have (and PostgreSQL keeps)."""
INDEXES = [
    f"CREATE INDEX IF NOT EXISTS {TYPE_INDEX} ON events (type) WHERE {TYPE_INDEXED_SQL}",
    f"DROP INDEX IF EXISTS {_EVERY_TYPE_INDEX}",
    COMPACTED_INDEX,
]
"""The type index of ``events``: the lifecycle types only (``TYPE_INDEXED``), in place of the index of every type
that databases made before it have (docs/design/store.md, "Appends, fifth round"), and the compacted segments'
(``_segments.py``)."""


def _trigger_name(ddl: str) -> str:
    return ddl.split()[5]  # CREATE TRIGGER IF NOT EXISTS <name>


OBSOLETE_TRIGGERS = ("events_no_delete",)
"""Triggers of files made before compaction, dropped when such a file is opened for writing (``events_delete_held``
refuses the same deletions but those of rows a segment holds)."""


def missing_triggers(present: set[str]) -> list[str]:
    """The DDL of the triggers not in ``present`` and the drops of the obsolete ones: none written when all are
    as they should be."""
    drops = [f"DROP TRIGGER {name}" for name in OBSOLETE_TRIGGERS if name in present]
    return drops + [ddl for ddl in APPEND_ONLY_TRIGGERS if _trigger_name(ddl) not in present]


def indexes_current(present: set[str]) -> bool:
    """Whether the index names ``present`` on the file are today's (the partial type index, not the full one)."""
    return TYPE_INDEX in present and _EVERY_TYPE_INDEX not in present and COMPACTED_INDEX_NAME in present


EVENT_TABLES = frozenset({"events", "blobs"})

BACKFILL_LABELS = (
    "INSERT INTO run_labels (label, run_id) SELECT json_extract(payload, '$.label'), stream FROM events "
    "WHERE type = 'run.started' ORDER BY position ON CONFLICT DO NOTHING"
)
"""A database made before labels were unique gets its labels once: the oldest run keeps a duplicated label
(its later namesakes still load and are still found by id); only new runs are refused a taken label."""


def may_become_ours(tables: set[str], *, create: bool) -> bool:
    """Only a file that already holds the event tables, or (when creating) holds no table at all, is ours to
    initialise or switch to WAL: a foreign SQLite file is refused untouched."""
    return tables >= EVENT_TABLES or (create and not tables)
