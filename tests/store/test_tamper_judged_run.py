"""Tampering with a judged run: each way of changing the demo's database after the fact, done as an attacker would
(raw sqlite3 on the real file, dropping the triggers first where they stand in the way), must be refused by the
database or named by ``verify``.

The database is the demo's (two runs imported from the bundled recordings, judged with rubric-rules, classified),
so the judging and classifying passes sealed it: deleted or cut streams are named by those seals, the newest
events no seal covers yet by a published head digest, and ``REPLACE`` or edits of events and blobs are refused by
the triggers or named. Its episodes are written as rows, not segments (``events_as_rows``), since the attacker
edits ``events`` rows; ``tests/store/test_sqlite_segments.py`` covers tampering with segments.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from tests.helpers.cli_in_process import invoke, problems
from tests.helpers.raw_sqlite import raw_sqlite
from tests.helpers.tamper_support import attacker

pytestmark = pytest.mark.usefixtures("events_as_rows")


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
