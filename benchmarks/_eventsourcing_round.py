"""Run by ``bench_appends.py`` with an interpreter that has ``eventsourcing``: append the steps of a JSON file (a list
of steps, each a list of ``[stream, seq, type, payload text]``) through eventsourcing's SQLite recorder, one
``insert_events`` a step, into a new database; print the wall and CPU seconds of the appends alone.

``synchronous``: ``default`` (eventsourcing as installed: SQLite's ``FULL``) or a value SQLite's pragma takes."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from eventsourcing.persistence import StoredEvent
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteConnectionPool, SQLiteDatastore


def main(source: Path, db: Path, synchronous: str) -> None:
    create = SQLiteConnectionPool._create_connection

    def tuned(pool: SQLiteConnectionPool) -> object:
        connection = create(pool)
        if synchronous != "default":
            connection._sqlite_conn.execute(f"PRAGMA synchronous={synchronous}")
        return connection

    SQLiteConnectionPool._create_connection = tuned
    datastore = SQLiteDatastore(str(db), originator_id_type="text")
    recorder = SQLiteApplicationRecorder(datastore)
    recorder.create_table()
    batches = [
        [StoredEvent(stream, seq, topic, payload.encode()) for stream, seq, topic, payload in step]
        for step in json.loads(source.read_text())
    ]  # built before the clock starts: the store's events were built before its clock too
    wall, cpu = time.perf_counter(), time.process_time()
    for batch in batches:
        recorder.insert_events(batch)
    print(time.perf_counter() - wall, time.process_time() - cpu)
    datastore.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3])
