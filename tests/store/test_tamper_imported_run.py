"""Tampering with imported runs' episodes, done as an attacker would (raw sqlite3 on the real database file, the
triggers dropped where they stand in the way), must be named by ``verify`` or refused by every reader.

The runs are the examples imported with ``import-trajectories`` (each episode sealed by its ``episode.sealed`` and
by ``run.finished``) and the bundled example runs: a deleted episode, a rewritten event with its hash recomputed,
a correctly chained step forged after an episode's end (``verify``, ``show``, ``replay``, ``export`` and ``import``
run as processes), a hostile stream name, runs without seals and a database from before the ``REPLACE`` trigger.
Their episodes are written as rows, not segments (``events_as_rows``), since the attacker edits ``events`` rows;
``tests/store/test_sqlite_segments.py`` covers tampering with segments.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli_in_process import invoke, problems
from tests.helpers.raw_sqlite import raw_sqlite
from tests.helpers.tamper_support import attacker

pytestmark = pytest.mark.usefixtures("events_as_rows")


@pytest.fixture
def examples_db(tmp_path: Path) -> Path:
    path = tmp_path / "examples.db"
    result = invoke(path, "import-trajectories", "--examples", "--format", "p2w-agentoccam", "--label", "ex")
    assert result.exit_code == 0, result.output
    return path


def test_a_run_finished_seal_names_a_deleted_episode_of_an_imported_run(examples_db: Path) -> None:
    ok = invoke(examples_db, "verify", "ex", "--json")
    assert ok.exit_code == 0 and json.loads(ok.stdout)["seals"] == 3 + 3  # each episode's seal, run.finished's
    with attacker(examples_db) as conn:
        (episode,) = conn.execute("SELECT stream FROM events WHERE type='episode.started' LIMIT 1").fetchone()
        conn.execute("DELETE FROM events WHERE stream = ?", (episode,))
    result = invoke(examples_db, "verify", "ex")
    assert result.exit_code == 1
    assert any(f"stream {episode}: stream missing: sealed by run.finished" in p for p in problems(result))
    assert any(f"stream {episode}: stream missing: sealed by episode.sealed" in p for p in problems(result))


def test_a_recomputed_event_is_named_as_a_broken_seal(examples_db: Path) -> None:
    """An attacker who rewrites an episode's last event and recomputes its hash still meets the seal."""
    from p2w_rt.schemas import StoredEvent

    with attacker(examples_db) as conn:
        row = conn.execute(
            "SELECT event_id, stream, seq, type, schema_version, recorded_at, causation_id, payload, blobs, prev_hash "
            "FROM events WHERE type='episode.finished' LIMIT 1"
        ).fetchone()
        payload = json.loads(row[7]) | {"answer": "forged"}
        forged = StoredEvent.from_dict(
            dict(
                zip(
                    ("event_id", "stream", "seq", "type", "schema_version", "recorded_at", "causation_id"),
                    row[:7],
                    strict=True,
                )
            )
            | {"payload": payload, "blobs": json.loads(row[8]), "prev_hash": row[9], "hash": ""}
        )
        conn.execute(
            "UPDATE events SET payload = ?, hash = ? WHERE event_id = ?",
            (forged.payload_json, forged.compute_hash(), row[0]),
        )
    result = invoke(examples_db, "verify", "ex")
    assert result.exit_code == 1
    found = problems(result)
    broken = [p for p in found if "seal broken" in p]
    assert len(broken) == 2, found  # the episode's own seal and run.finished's both name it
    assert all(f"stream {row[1]} seq {row[2]}: seal broken" in p for p in broken)
    # and the episode's summary row (written before the forgery) no longer agrees with the forged log
    assert [p for p in found if "seal broken" not in p] == [
        p for p in found if f"{row[1]}: the episode summary disagrees with the log" in p
    ]
    assert len(found) == 3, found
    assert any("sealed by run.finished" in p for p in broken) and any("sealed by episode.sealed" in p for p in broken)


def test_runs_without_seals_verify_as_unsealed(tmp_path: Path) -> None:
    """A run that finished without seals (as runs recorded before seals did: run.finished version 1 reads as
    ``seals=None``) is named unsealed; the bundled example runs, recorded with today's code, carry theirs."""
    from p2w_runtime.demo.examples import example_run_bundles
    from p2w_runtime.store import open_store
    from p2w_runtime.testing.episodes import EpisodeBuilder
    from tests.helpers.classify_builders import add_run

    db = tmp_path / "old.db"
    for bundle in example_run_bundles():
        assert invoke(db, "import", str(bundle)).exit_code == 0
    with raw_sqlite(db) as conn:
        assert conn.execute("SELECT DISTINCT schema_version FROM events WHERE type='run.finished'").fetchall() == [(2,)]
    assert invoke(db, "verify").output.count("unsealed: run") == 0
    old = EpisodeBuilder("old", "Priya_Raman_A1", query="q", start_url="http://search.p2w.test/")
    old.observation(1, "http://search.p2w.test/")
    old.action(1, "stop", "done")
    old.finish("answered", "done", steps=1)

    async def add() -> None:
        async with open_store(db) as store:
            await add_run(store, "old", [old], run_id="old")

    asyncio.run(add())
    result = invoke(db, "verify")
    assert result.exit_code == 0 and result.output.count("unsealed: run") == 1
    assert json.loads(invoke(db, "verify", "--json").stdout)["unsealed"] == ["old"]


def test_a_hostile_stream_name_is_clipped_in_the_report(examples_db: Path) -> None:
    huge = "x" * 1_000_000
    with raw_sqlite(examples_db, isolation_level=None) as conn:
        row = list(conn.execute("SELECT * FROM events WHERE seq = 1 LIMIT 1").fetchone())
        columns = [c[1] for c in conn.execute("PRAGMA table_info(events)")]
        values = dict(zip(columns, row, strict=True)) | {"position": None, "event_id": "forged", "stream": huge}
        conn.execute(f"INSERT INTO events VALUES ({', '.join('?' * len(columns))})", list(values.values()))
    result = invoke(examples_db, "verify")
    assert result.exit_code == 1 and "content does not match its hash" in result.output
    assert max(map(len, result.output.splitlines())) < 600


def test_a_database_from_before_the_replace_trigger_gains_it_when_opened(examples_db: Path) -> None:
    with raw_sqlite(examples_db, isolation_level=None) as conn:
        conn.execute("DROP TRIGGER events_no_replace")
        conn.execute("DROP TRIGGER blobs_keep_first")
    assert invoke(examples_db, "verify").exit_code == 0
    with raw_sqlite(examples_db, isolation_level=None) as conn:
        triggers = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='trigger'")}
        assert {"events_no_replace", "blobs_keep_first"} <= triggers
        row = conn.execute("SELECT * FROM events LIMIT 1").fetchone()
        with pytest.raises(sqlite3.IntegrityError, match="no REPLACE"):
            conn.execute(f"INSERT OR REPLACE INTO events VALUES ({', '.join('?' * len(row))})", row)


def installed(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed ``p2w-rt`` in a process of its own, as the attacker's victim would run it."""
    command = [str(Path(sys.executable).with_name("p2w-rt")), "--db", str(db), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def forge_step_after_the_end(db: Path) -> tuple[str, int]:
    """Insert, with plain SQL and every trigger in place, a correctly chained ``click [1]`` action after a sealed
    episode's ``episode.finished``: its hash is right and it extends the chain, so only the grammar tells."""
    from p2w_rt.schemas import StoredEvent, uuid7

    columns = ("position", "event_id", "stream", "seq", "type", "schema_version", "recorded_at", "causation_id")
    with raw_sqlite(db, isolation_level=None) as conn:
        stream, seq, end_hash = conn.execute(
            "SELECT stream, seq, hash FROM events WHERE type = 'episode.finished' ORDER BY position LIMIT 1"
        ).fetchone()
        version, recorded_at, payload = conn.execute(
            "SELECT schema_version, recorded_at, payload FROM events WHERE type = 'action' AND stream = ? LIMIT 1",
            (stream,),
        ).fetchone()
        forged = StoredEvent.from_dict(
            dict(zip(columns[1:], (uuid7(), stream, seq + 1, "action", version, recorded_at, None), strict=True))
            | {"payload": json.loads(payload) | {"raw": "click [1]", "parsed": {"name": "click", "args": ["1"]}}}
            | {"blobs": [], "prev_hash": end_hash, "hash": ""}
        )
        forged.hash = forged.compute_hash()
        (position,) = conn.execute("SELECT max(position) + 1 FROM events").fetchone()
        conn.execute(
            f"INSERT INTO events VALUES ({', '.join('?' * 12)})",
            (position, forged.event_id, stream, forged.seq, "action", version, recorded_at, None)
            + (forged.payload_json, "[]", forged.prev_hash, forged.hash),
        )
    return stream, forged.seq


def test_a_chained_step_inserted_after_a_sealed_finished_episode_fails_verify_and_every_reader(
    examples_db: Path, tmp_path: Path
) -> None:
    stream, seq = forge_step_after_the_end(examples_db)
    said = (
        f"action follows episode.finished (seq {seq - 1}): nothing may follow the end of an episode; "
        "added after the fact"
    )
    verified = installed(examples_db, "verify")
    lines = (verified.stdout + verified.stderr).splitlines()
    assert verified.returncode == 1, lines
    (mismatch,) = [line for line in lines if line.startswith("MISMATCH")]
    assert mismatch.startswith(f"MISMATCH stream {stream} seq {seq} event ") and mismatch.endswith(said)
    assert any(line.startswith("verify failed: 1 problem(s)") for line in lines)
    shown = installed(examples_db, "show", "ex", stream.rsplit("/", 1)[1])
    assert shown.returncode != 0 and "click [1]" not in shown.stdout
    assert shown.stderr.splitlines() == [f"error: stream {stream} seq {seq}: {said}; run p2w-rt verify"]
    judged = installed(examples_db, "replay", "ex", "--judge", "rubric-rules")
    assert judged.returncode != 0 and f"stream {stream} seq {seq}: {said}" in judged.stderr.splitlines()[-1]
    bundle = tmp_path / "ex.p2w"
    assert installed(examples_db, "export", "ex", "-o", str(bundle)).returncode == 0
    imported = installed(tmp_path / "other.db", "import", str(bundle))
    assert imported.returncode != 0 and imported.stderr.splitlines() == [
        f"error: {bundle}: stream {stream} seq {seq} event {imported.stderr.split(' event ')[1].split(':')[0]}: "
        f"{said} (bundle tampered)"
    ]
