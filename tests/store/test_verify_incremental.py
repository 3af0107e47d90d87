"""Incremental verify: a whole-store ``verify`` appends a mark, the next one checks the events after it in full and
those before it by their streams' heads and counts (docs/design/integrity.md, "Incremental verify"). Tampering is
done as in ``tests/store/test_tamper_judged_run.py``: raw sqlite3 on the file, triggers dropped; the databases keep
every event a row, so the forger edits rows (segments: ``p2w_runtime/store/contract/marks.py``)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2w_rt.cli import main
from p2w_rt.schemas import StoredEvent
from p2w_runtime.store import MARK_STREAM, VerifyReport, _segments, append_mark, open_store, verify_whole_store
from p2w_runtime.store._rows import row_to_event
from tests.helpers.raw_sqlite import raw_sqlite
from tests.helpers.tamper_support import attacker

COLUMNS = (
    "event_id, stream, seq, position, type, schema_version, recorded_at, causation_id, payload, blobs, prev_hash, hash"
)


@pytest.fixture(autouse=True)
def _rows_only() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_segments, "SEGMENT_MIN_EVENTS", 10**9)
        yield


def invoke(db: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)


def report(db: Path, *args: str) -> dict[str, Any]:
    result = invoke(db, "verify", "--json", *args)
    assert result.exit_code in (0, 1), result.output
    return dict(json.loads(result.stdout))


def reasons(found: dict[str, Any]) -> list[str]:
    return [p["reason"] for p in found["problems"]]


def marks(db: Path) -> int:
    with raw_sqlite(db) as conn:
        return int(conn.execute("SELECT count(*) FROM events WHERE stream = ?", (MARK_STREAM,)).fetchone()[0])


def files(db: Path) -> tuple[bytes, bytes]:
    """The database's bytes and its write-ahead log's (none: empty); the ``-shm`` index is every reader's."""
    wal = db.with_name(db.name + "-wal")
    return db.read_bytes(), wal.read_bytes() if wal.exists() else b""


def import_examples(db: Path, label: str) -> None:
    result = invoke(db, "import-trajectories", "--examples", "--format", "p2w-agentoccam", "--label", label)
    assert result.exit_code == 0, result.output


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """The bundled examples, verified once: the store holds its first mark."""
    path = tmp_path / "examples.db"
    import_examples(path, "ex")
    first = report(path)
    assert first["ok"] and first["marked"] and not first["incremental"]
    assert first["full_because"] == "no earlier verify mark"
    return path


def episode(db: Path, label_position: int = 0) -> str:
    with raw_sqlite(db) as conn:
        rows = conn.execute("SELECT DISTINCT stream FROM events WHERE type = 'episode.started' ORDER BY position")
        return str(rows.fetchall()[label_position][0])


def rechain(conn: sqlite3.Connection, stream: str, seq: int) -> None:
    """Edit event ``seq`` of ``stream`` and recompute its hash and every later one's, as a forger would."""
    rows = conn.execute(f"SELECT {COLUMNS} FROM events WHERE stream = ? ORDER BY seq", (stream,)).fetchall()
    events = [row_to_event(row) for row in rows]
    prev = events[seq - 2].hash if seq > 1 else events[0].prev_hash
    for event in events[seq - 1 :]:
        forged = StoredEvent.from_dict(event.to_dict() | {"prev_hash": prev, "hash": ""})
        if event.seq == seq:
            forged = StoredEvent.from_dict(forged.to_dict() | {"recorded_at": "2001-01-01T00:00:00.000000Z"})
        prev = forged.compute_hash()
        conn.execute(
            "UPDATE events SET recorded_at = ?, prev_hash = ?, hash = ? WHERE event_id = ?",
            (forged.recorded_at, forged.prev_hash, prev, event.event_id),
        )


def test_an_unchanged_stores_second_verify_checks_no_event_and_appends_nothing(db: Path) -> None:
    second = report(db)
    assert second["ok"] and second["incremental"] and (second["events"], second["streams"]) == (0, 0)
    assert second["marks"] == 1 and not second["marked"] and second["since"] == 66
    assert marks(db) == 1
    assert "after position 66 (the log before it unchanged" in invoke(db, "verify").stdout


def test_a_forger_who_recomputes_a_verified_streams_hashes_is_found_and_no_mark_is_appended(db: Path) -> None:
    with attacker(db) as conn:
        rechain(conn, episode(db), 2)
    found = report(db)
    assert not found["ok"] and found["incremental"] and found["events"] == 0 and not found["marked"]
    assert any(r.startswith("the streams differ from the verify mark at position 66") for r in reasons(found))
    assert marks(db) == 1
    assert not report(db, "--full")["ok"]  # the full check names the seals it breaks


def test_a_deleted_verified_event_is_found(db: Path) -> None:
    with attacker(db) as conn:
        conn.execute("DELETE FROM events WHERE stream = ? AND seq = 2", (episode(db),))
    found = report(db)
    assert not found["ok"] and found["incremental"]
    assert "65 events up to position 66, 66 at the verify mark at position 66: deleted" in reasons(found)


def test_a_removed_verified_stream_and_a_deleted_blob_are_found(db: Path) -> None:
    with attacker(db) as conn:
        conn.execute("DELETE FROM events WHERE stream = ?", (episode(db, 1),))
        conn.execute("DELETE FROM blobs WHERE sha256 = (SELECT min(sha256) FROM blobs)")
    found = reasons(report(db))
    assert any(r.startswith("the streams differ from the verify mark") for r in found), found
    assert any(r.startswith("8 blobs, 9 at the verify mark at position 66") for r in found), found


def test_a_tamper_in_the_new_part_is_found(db: Path) -> None:
    import_examples(db, "later")
    with attacker(db) as conn:
        (position,) = conn.execute("SELECT max(position) FROM events WHERE type = 'action'").fetchone()
        conn.execute("UPDATE events SET recorded_at = '2001-01-01T00:00:00.000000Z' WHERE position = ?", (position,))
    found = report(db)
    assert not found["ok"] and found["incremental"] and found["since"] == 66 and found["events"] == 66
    assert reasons(found) == ["content does not match its hash (modified)"]
    assert marks(db) == 1


def test_new_events_are_checked_once_and_the_mark_follows_them(db: Path) -> None:
    import_examples(db, "later")
    second = report(db)
    assert second["ok"] and second["incremental"] and second["events"] == 66 and second["marked"]
    assert [t["events"] for t in second["uncovered"]] == [0, 0] and second["unsealed"] == []  # both runs, as --full
    third = report(db)
    assert third["ok"] and third["since"] == 66 + 1 + 66 and third["events"] == 0


def test_an_in_place_edit_before_the_mark_passes_the_incremental_check_and_fails_the_full_one(db: Path) -> None:
    """The documented limit: an edit that leaves the stored hash as it was is read only by ``--full``."""
    with attacker(db) as conn:
        conn.execute("UPDATE events SET recorded_at = '2001-01-01T00:00:00.000000Z' WHERE type = 'action'")
    assert report(db)["ok"]
    full = report(db, "--full")
    assert not full["ok"] and not full["incremental"] and full["full_because"] == "--full"
    assert "content does not match its hash (modified)" in reasons(full)


def test_two_verifies_at_once_leave_a_consistent_log(db: Path) -> None:
    import_examples(db, "later")
    command = [str(Path(sys.executable).with_name("p2w-rt")), "--db", str(db), "verify", "--json"]
    running = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [process.communicate(timeout=120) for process in running]
    assert all(process.returncode == 0 for process in running), outputs
    assert all(json.loads(out)["incremental"] for out, _ in outputs)
    with raw_sqlite(db) as conn:
        seqs = [row[0] for row in conn.execute("SELECT seq FROM events WHERE stream = ? ORDER BY seq", (MARK_STREAM,))]
    assert seqs in ([1, 2], [1, 2, 3])  # one after the other, the second finds only the first's mark to check
    assert report(db, "--full")["ok"]
    after = report(db)
    assert after["ok"] and after["incremental"] and after["events"] == 0


def test_marks_stay_out_of_runs_bundles_migrations_and_compaction(db: Path, tmp_path: Path) -> None:
    listed = [json.loads(line) for line in invoke(db, "runs", "--json").stdout.splitlines()]
    assert [run["label"] for run in listed] == ["ex"]
    bundle = tmp_path / "ex.p2w"
    assert invoke(db, "export", "ex", "-o", str(bundle)).exit_code == 0
    assert MARK_STREAM.encode() not in bundle.read_bytes()
    copy = tmp_path / "copy.db"
    assert invoke(copy, "import", str(bundle)).exit_code == 0
    moved = tmp_path / "moved.db"
    migrated = invoke(db, "migrate", "--from", str(db), "--to", str(moved))
    assert migrated.exit_code == 0, migrated.output
    assert marks(moved) == 0 and report(moved)["full_because"] == "no earlier verify mark"
    assert invoke(db, "compact").exit_code == 0
    after = report(db)
    assert after["ok"] and after["incremental"]


def _keys(tmp_path: Path) -> tuple[Path, Path]:
    key = Ed25519PrivateKey.generate()
    private, public = tmp_path / "key.pem", tmp_path / "key.pub"
    private.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    public.write_bytes(
        key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return private, public


def test_a_trusted_key_starts_only_from_a_mark_it_signed(db: Path, tmp_path: Path) -> None:
    private, public = _keys(tmp_path)
    unsigned = report(db, "--trusted-key", str(public))
    assert unsigned["ok"] and unsigned["full_because"] == "the last verify mark is not signed by the trusted key"
    assert not unsigned["marked"] or marks(db) == 2
    signed = report(db, "--sign-key", str(private))
    assert signed["ok"] and signed["marked"]  # the same check, now vouched for by the key
    trusted = report(db, "--trusted-key", str(public))
    assert trusted["ok"] and trusted["incremental"] and trusted["events"] == 0
    with attacker(db) as conn:  # a forger gives the signed mark the heads of a forged log, recomputing its hash
        (seq,) = conn.execute("SELECT max(seq) FROM events WHERE stream = ?", (MARK_STREAM,)).fetchone()
        row = conn.execute(f"SELECT {COLUMNS} FROM events WHERE stream = ? AND seq = ?", (MARK_STREAM, seq)).fetchone()
        event = row_to_event(row)
        payload = json.loads(event.payload_json) | {"heads": "sha256:" + "0" * 64}
        forged = StoredEvent.from_dict(event.to_dict() | {"payload": payload, "hash": ""})
        conn.execute(
            "UPDATE events SET payload = ?, hash = ? WHERE event_id = ?",
            (forged.payload_json, forged.compute_hash(), event.event_id),
        )
    assert not report(db)["ok"]  # without a trusted key the check starts from it and finds the heads differ
    refused = report(db, "--trusted-key", str(public))  # the key's check starts from nothing it did not sign
    assert refused["ok"] and refused["full_because"] == "the last verify mark is not signed by the trusted key"
    usage = invoke(db, "verify", "ex", "--sign-key", str(private))
    assert usage.exit_code == 2 and "whole store" in usage.output


def test_a_read_only_store_verifies_incrementally_and_is_left_as_it_was(db: Path) -> None:
    """Opened read-only (as a file this process cannot write is): the check runs, the mark it would append is not
    written (``tests/store/test_read_only.py`` runs ``verify`` on a read-only mount, every byte compared)."""
    import_examples(db, "later")
    before = files(db)

    async def check() -> tuple[VerifyReport, bool]:
        async with open_store(db, create=False, read_only=True) as store:
            report = await verify_whole_store(store)
            return report, await append_mark(store, report)

    report, marked = asyncio.run(check())
    assert report.ok and report.incremental and report.events == 66 and report.mark is not None
    assert not marked and marks(db) == 1 and files(db) == before
