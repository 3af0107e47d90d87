"""The tamper matrix: each way of changing a recorded run after the fact, done as an attacker would (raw
sqlite3 on the real database file, dropping the triggers first where they stand in the way), must be
refused by the database or named by ``verify``.

The database is the demo's (two runs imported from the bundled recordings, judged with rubric-rules,
classified), so the judging and classifying passes sealed it; the examples imported with
``import-trajectories`` carry a ``run.finished`` seal.

The matrix edits events rows, so its databases are written with every event a row: an import would otherwise
store each episode as a segment (docs/design/store.md, "Segments"), whose tampering
``tests/store/test_sqlite_segments.py`` covers.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from p2w_rt.cli import main
from p2w_runtime.store import _segments
from tests.helpers import tamper_support
from tests.helpers.raw_sqlite import raw_sqlite

TRIGGERS = ("events_no_update", "events_delete_held", "blobs_no_update", "blobs_no_delete")


def invoke(db: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)


@pytest.fixture(scope="module", autouse=True)
def _rows_only() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_segments, "SEGMENT_MIN_EVENTS", 10**9)
        yield


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    assert CliRunner().invoke(main, ["demo", "--out", str(out)], catch_exceptions=False).exit_code == 0
    return out / "demo.db"


@pytest.fixture
def db(demo_db: Path, tmp_path: Path) -> Path:
    """A private copy of the demo database to tamper with."""
    copy = tmp_path / "demo.db"
    shutil.copy(demo_db, copy)
    return copy


@pytest.fixture
def examples_db(tmp_path: Path) -> Path:
    path = tmp_path / "examples.db"
    result = invoke(path, "import-trajectories", "--examples", "--format", "p2w-agentoccam", "--label", "ex")
    assert result.exit_code == 0, result.output
    return path


def attacker(db: Path) -> AbstractContextManager[sqlite3.Connection]:
    """A plain sqlite3 connection with the append-only triggers dropped, as anyone with the file can do."""
    return tamper_support.attacker(db, TRIGGERS)


def run_id(db: Path, label: str) -> str:
    with raw_sqlite(db) as conn:
        return conn.execute(
            "SELECT stream FROM events WHERE type='run.started' AND json_extract(payload, '$.label') = ?", (label,)
        ).fetchone()[0]


def failed_episode(db: Path) -> str:
    """The episode of the `earlier` run that rubric-rules scored unsuccessful."""
    with raw_sqlite(db) as conn:
        (stream,) = conn.execute(
            "SELECT DISTINCT json_extract(payload, '$.episode_stream') FROM events WHERE type='judgment' "
            "AND stream = ? || '/judgments' AND json_extract(payload, '$.metrics.success') = 0",
            (run_id(db, "earlier"),),
        ).fetchone()
    return stream


def problems(result: Result) -> list[str]:
    return [line for line in result.output.splitlines() if line.startswith("MISMATCH")]


def test_the_untouched_demo_verifies_with_its_pass_seals(db: Path) -> None:
    result = invoke(db, "verify", "--json")
    report = json.loads(result.stdout)
    assert result.exit_code == 0 and report["ok"] and report["unsealed"] == []
    # per run: an episode.sealed per episode (24), run.finished seals 24 episodes, judgments 25, classes 26
    assert report["seals"] == 2 * (24 + 24 + 25 + 26)


@pytest.mark.parametrize(
    ("column", "value", "named"),
    [
        ("seq", "'abc'", "seq 'abc' is not a number"),
        ("recorded_at", "x'ff'", "content does not match its hash (modified)"),
        ("stream", "42", "content does not match its hash (modified)"),
    ],
)
def test_a_column_edited_to_a_value_of_another_type_is_named_not_a_traceback(
    db: Path, column: str, value: str, named: str
) -> None:
    """SQLite keeps whatever type a column is given: text in ``seq``, bytes in ``recorded_at``."""
    episode = failed_episode(db)
    with attacker(db) as conn:
        conn.execute(f"UPDATE events SET {column} = {value} WHERE stream = ? AND seq = 1", (episode,))
    result = CliRunner().invoke(main, ["--db", str(db), "verify", "--full"])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output and any(p.endswith(named) for p in problems(result)), result.output


def test_deleting_a_whole_episode_stream_is_named_as_missing(db: Path) -> None:
    episode = failed_episode(db)
    with attacker(db) as conn:
        conn.execute("DELETE FROM events WHERE stream = ?", (episode,))
    result = invoke(db, "verify")
    assert result.exit_code == 1
    assert any(f"stream {episode}: stream missing: sealed by streams.sealed" in p for p in problems(result))


def test_deleting_the_last_event_of_an_episode_is_named_as_truncated(db: Path) -> None:
    episode = failed_episode(db)
    with attacker(db) as conn:
        (last,) = conn.execute("SELECT max(seq) FROM events WHERE stream = ?", (episode,)).fetchone()
        conn.execute("DELETE FROM events WHERE stream = ? AND seq = ?", (episode, last))
    result = invoke(db, "verify", "earlier")
    assert result.exit_code == 1
    assert any(f"stream {episode} seq {last - 1}: stream truncated: {last - 1} events" in p for p in problems(result))


def test_deleting_a_judgment_is_named(db: Path) -> None:
    judgments = run_id(db, "earlier") + "/judgments"
    with attacker(db) as conn:
        (seq,) = conn.execute(
            "SELECT max(seq) FROM events WHERE stream = ? AND type = 'judgment'", (judgments,)
        ).fetchone()
        conn.execute("DELETE FROM events WHERE stream = ? AND seq = ?", (judgments, seq))
    result = invoke(db, "verify")
    assert result.exit_code == 1
    assert any(p.startswith(f"MISMATCH stream {judgments} seq {seq + 1}") and "gap" in p for p in problems(result))


def test_cutting_off_the_judgments_with_their_seal_is_named_by_the_later_classification_seal(db: Path) -> None:
    run = run_id(db, "earlier")
    judgments = f"{run}/judgments"
    with attacker(db) as conn:
        conn.execute("DELETE FROM events WHERE stream = ? AND seq > 12", (judgments,))
    result = invoke(db, "verify", run)
    assert result.exit_code == 1
    (problem,) = problems(result)
    assert f"stream {judgments} seq 12: stream truncated: 12 events" in problem
    assert "sealed by streams.sealed" in problem and "/classifications" in problem


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


def test_insert_or_replace_of_an_event_is_refused_by_the_database(db: Path) -> None:
    with raw_sqlite(db, isolation_level=None) as conn:  # triggers in place: no DELETE fires on REPLACE
        row = conn.execute("SELECT * FROM events WHERE type='episode.finished' LIMIT 1").fetchone()
        columns = [c[1] for c in conn.execute("PRAGMA table_info(events)")]
        forged = dict(zip(columns, row, strict=True)) | {"payload": '{"forged":true}'}
        marks = ", ".join("?" * len(columns))
        for verb in ("INSERT OR REPLACE", "REPLACE"):
            with pytest.raises(sqlite3.IntegrityError, match=r"event_id or stream seq exists \(no REPLACE\)"):
                conn.execute(f"{verb} INTO events ({', '.join(columns)}) VALUES ({marks})", list(forged.values()))
        upsert = f"INSERT INTO events ({', '.join(columns)}) VALUES ({marks}) ON CONFLICT DO NOTHING"
        with pytest.raises(sqlite3.IntegrityError, match=r"event_id or stream seq exists \(no REPLACE\)"):
            conn.execute(upsert, list(forged.values()))
        assert conn.execute("SELECT * FROM events WHERE position = ?", (row[0],)).fetchone() == row
    assert invoke(db, "verify").exit_code == 0


def test_blob_replace_is_ignored_and_update_delete_are_refused_or_named(db: Path) -> None:
    with raw_sqlite(db, isolation_level=None) as conn:
        sha, size, codec, data = conn.execute("SELECT sha256, size, codec, data FROM blobs LIMIT 1").fetchone()
        conn.execute("INSERT OR REPLACE INTO blobs VALUES (?, ?, ?, ?)", (sha, 3, codec, b"bad"))
        conn.execute(
            "INSERT INTO blobs VALUES (?, ?, ?, ?) ON CONFLICT(sha256) DO UPDATE SET data = excluded.data",
            (sha, 3, codec, b"bad"),
        )
        assert conn.execute("SELECT data FROM blobs WHERE sha256 = ?", (sha,)).fetchone() == (data,)
        for statement in ("UPDATE blobs SET data = x'00' WHERE sha256 = ?", "DELETE FROM blobs WHERE sha256 = ?"):
            with pytest.raises(sqlite3.IntegrityError, match="append-only"):
                conn.execute(statement, (sha,))
    assert invoke(db, "verify").exit_code == 0
    with attacker(db) as conn:
        conn.execute("UPDATE blobs SET data = ? WHERE sha256 = ?", (b"\x28\xb5\x2f\xfd garbage", sha))
    assert invoke(db, "verify").exit_code == 0  # a blob's bytes are read by the full check only (integrity.md)
    updated = invoke(db, "verify", "--full")
    assert updated.exit_code == 1 and any(f"blob {sha} cannot be decompressed" in p for p in problems(updated))
    with attacker(db) as conn:
        conn.execute("DELETE FROM blobs WHERE sha256 = ?", (sha,))
    counted = invoke(db, "verify")  # the incremental check counts the blobs the mark recorded
    assert counted.exit_code == 1 and any("blobs were deleted" in p for p in problems(counted))
    deleted = invoke(db, "verify", "--full")
    assert deleted.exit_code == 1 and any(f"blob {sha} is referenced but missing" in p for p in problems(deleted))


def test_expect_names_a_wrong_digest_and_the_published_one_catches_a_removed_tail(db: Path) -> None:
    head = invoke(db, "verify", "earlier", "--head")
    assert head.exit_code == 0
    digest = head.stdout.splitlines()[-1]
    assert digest.startswith("sha256:") and len(digest) == 7 + 64
    assert invoke(db, "verify", "earlier", "--expect", digest.upper().removeprefix("SHA256:")).exit_code == 0
    wrong = invoke(db, "verify", "earlier", "--expect", "sha256:" + "0" * 64)
    assert wrong.exit_code == 1
    assert f"head digest {digest}, expected sha256:{'0' * 64}" in wrong.output and "run " in wrong.output
    classifications = run_id(db, "earlier") + "/classifications"
    # the one deletion no seal inside the database can show: the newest events, which nothing sealed yet
    with attacker(db) as conn:
        conn.execute("DELETE FROM events WHERE stream = ? AND type = 'streams.sealed'", (classifications,))
    assert invoke(db, "verify", "earlier").exit_code == 0
    cut = invoke(db, "verify", "earlier", "--expect", digest)
    assert cut.exit_code == 1 and f"MISMATCH run {run_id(db, 'earlier')}: head digest" in cut.output


def test_deleting_run_finished_is_named_by_the_pass_seals_after_it(db: Path) -> None:
    run = run_id(db, "earlier")
    with attacker(db) as conn:
        conn.execute("DELETE FROM events WHERE stream = ? AND type = 'run.finished'", (run,))
        (left,) = conn.execute("SELECT count(*) FROM events WHERE stream = ?", (run,)).fetchone()
    assert left == 1 + 24, "run.started and an episode.sealed per episode"
    result = invoke(db, "verify", "earlier")
    assert result.exit_code == 1
    found = problems(result)
    truncated = [p for p in found if f"stream {run} seq {left}: stream truncated: {left} events" in p]
    assert len(truncated) == 2, found  # sealed by the judging and by the classifying pass
    # the run's summary row (it saw run.finished) no longer agrees with the log: the only other problem named
    assert all("summary disagrees with the log" in p for p in found if p not in truncated), found
    assert any(f"{run}: the run summary disagrees with the log" in p for p in found), found


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
