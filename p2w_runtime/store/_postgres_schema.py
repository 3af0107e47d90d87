"""What PostgreSQL adds to the tables: the triggers that keep ``events``, ``segments`` and ``blobs`` append-only (but
the DELETE of an event row a segment holds: compaction), the index of compacted episodes, and stream names compared
byte-wise; ``TRIGGERS`` names the triggers a set-up database holds."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection

from p2w_runtime.store._segments import COMPACTED_INDEX

APPEND_ONLY = [
    "CREATE OR REPLACE FUNCTION p2w_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "RAISE EXCEPTION '% are append-only: % refused', TG_TABLE_NAME, TG_OP "
    "USING ERRCODE = 'integrity_constraint_violation'; "
    "END $$",
    # compaction (``_sql_compact.py``) deletes the rows of events it has just stored in a segment: no other row goes
    "CREATE OR REPLACE FUNCTION p2w_delete_held() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "IF EXISTS (SELECT 1 FROM segments WHERE stream = OLD.stream AND last_seq >= OLD.seq AND first_seq <= OLD.seq) "
    "THEN RETURN OLD; END IF; "
    "RAISE EXCEPTION 'events are append-only: DELETE refused (only a row a segment holds may go)' "
    "USING ERRCODE = 'integrity_constraint_violation'; "
    "END $$",
    # an optimistic append (``_log_end.py``) learns that the log moved by colliding with a row at its first position;
    # a compacted event left no row there, so rows at or before a segment's last position collide with it instead
    "CREATE OR REPLACE FUNCTION p2w_past_segments() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "IF (SELECT min(position) FROM new_rows) <= (SELECT max(last_position) FROM segments) THEN "
    "RAISE EXCEPTION 'events: a segment holds this position or a later one' "
    "USING ERRCODE = 'unique_violation', CONSTRAINT = 'events_pkey'; END IF; RETURN NULL; "
    "END $$",
    *(
        f"CREATE OR REPLACE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
        f"FOR EACH ROW EXECUTE FUNCTION p2w_append_only()"
        for table in ("blobs", "segments")
    ),
    "CREATE OR REPLACE TRIGGER events_append_only BEFORE UPDATE ON events "
    "FOR EACH ROW EXECUTE FUNCTION p2w_append_only()",
    "CREATE OR REPLACE TRIGGER events_delete_held BEFORE DELETE ON events "
    "FOR EACH ROW EXECUTE FUNCTION p2w_delete_held()",
    "CREATE OR REPLACE TRIGGER events_past_segments AFTER INSERT ON events REFERENCING NEW TABLE AS new_rows "
    "FOR EACH STATEMENT EXECUTE FUNCTION p2w_past_segments()",
    *(
        f"CREATE OR REPLACE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} "
        f"FOR EACH STATEMENT EXECUTE FUNCTION p2w_append_only()"
        for table in ("events", "blobs", "segments")
    ),
    COMPACTED_INDEX,  # with the triggers that came with it: a database that lacks them lacks it
]
"""``INSERT ... ON CONFLICT DO UPDATE`` runs the UPDATE trigger, so no upsert can rewrite an event either."""
TRIGGERS = {f"{t}_{kind}" for t in ("events", "blobs", "segments") for kind in ("append_only", "no_truncate")} | {
    "events_delete_held",
    "events_past_segments",
}

COLUMNS = (
    "SELECT table_name, column_name FROM information_schema.columns "
    "WHERE table_schema = current_schema() AND table_name IN ('events', 'blobs')"
)
"""The columns of the tables named ``events`` and ``blobs`` found in the database."""


def foreign(columns: set[tuple[str, str]]) -> bool:
    """Whether tables named ``events`` and ``blobs`` lack a column of ours: another tool's, never to be given our
    tables and triggers (they would refuse its own updates and inserts)."""
    from p2w_runtime.store._core import BLOBS, EVENTS

    return not {(table.name, column.name) for table in (EVENTS, BLOBS) for column in table.columns} <= columns


_LOCALE_STREAMS = (
    "SELECT c.relname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
    "JOIN pg_collation l ON l.oid = a.attcollation "
    "WHERE c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()) "
    "AND c.relname IN ('events', 'segments') AND a.attname = 'stream' AND l.collname NOT IN ('C', 'POSIX')"
)
"""The tables whose ``stream`` column compares by a locale (the database's default collation, say ``en_US.UTF-8``
or ICU's ``en-US``, where ``_`` sorts before ``A`` and ``a`` before ``B``), not byte-wise."""


async def bytewise_streams(conn: AsyncConnection, *, change: bool, lock: int) -> bool:
    """Whether ``events.stream`` and ``segments.stream`` compare byte-wise (``COLLATE "C"``), as in SQLite and Python;
    ``change``: make them so first, under the schema ``lock`` (a one-time index rebuild for a database made before).

    ``read_streams`` pages by ``stream > ?`` in SQL and orders what a page holds in Python: under a locale the two
    disagree and a page repeated or skipped events. A role that may not alter the tables leaves them as they are (in
    a savepoint, so the open goes on): False, and the store reads one stream per query instead."""
    if not (await conn.execute(text(_LOCALE_STREAMS))).first():
        return True
    if not change:
        return False
    try:
        async with conn.begin_nested():
            await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": lock})
            for (table,) in (await conn.execute(text(_LOCALE_STREAMS))).all():  # again, locked: another opener may have
                await conn.execute(text(f'ALTER TABLE {table} ALTER COLUMN stream TYPE VARCHAR COLLATE "C"'))
    except DBAPIError:
        return False
    return True
