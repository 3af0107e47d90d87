"""runs / show / verify / export / import through the p2w-rt command."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import sqlite3
from pathlib import Path

import pytest
import zstandard
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.store import open_store
from tests.helpers.builders import build_run
from tests.helpers.raw_sqlite import raw_sqlite


def invoke(db: Path, *args: str):
    return CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "runs.db"

    async def make() -> None:
        async with open_store(path) as store:
            await build_run(store, "december")

    asyncio.run(make())
    return path


def test_runs_lists_the_run(db: Path) -> None:
    result = invoke(db, "runs", "--json")
    assert result.exit_code == 0
    (row,) = [json.loads(line) for line in result.output.splitlines()]
    assert row["label"] == "december" and row["episodes"] == 2 and row["status"] == "completed"


def test_show_timeline_and_unknown_run(db: Path) -> None:
    result = invoke(db, "show", "december", "Ann_Lee_A3")
    assert result.exit_code == 0
    assert "click [2]" in result.output and "answered after 3 steps" in result.output
    episodes = invoke(db, "show", "december", "--json")
    assert [json.loads(line)["task_id"] for line in episodes.output.splitlines()] == ["Ann_Lee_A3", "Ann_Lee_B3"]
    missing = invoke(db, "show", "march")
    assert missing.exit_code == 2 and "no run 'march'" in missing.output
    missing_task = invoke(db, "show", "december", "Nobody_X1")
    assert missing_task.exit_code != 0 and "Nobody_X1" in missing_task.output


def test_verify_ok_then_names_the_tampered_event(db: Path) -> None:
    ok = invoke(db, "verify")
    assert ok.exit_code == 0 and "ok: 3 streams" in ok.output
    with raw_sqlite(db) as conn:
        event_id, stream, seq, payload = conn.execute(
            "SELECT event_id, stream, seq, payload FROM events WHERE type='action' ORDER BY position LIMIT 1 OFFSET 3"
        ).fetchone()
        conn.execute("DROP TRIGGER events_no_update")
        conn.execute("UPDATE events SET payload=? WHERE event_id=?", (payload.replace("click", "clack"), event_id))
    bad = invoke(db, "verify", "december")
    assert bad.exit_code == 1
    mismatches = [line for line in bad.output.splitlines() if line.startswith("MISMATCH")]
    assert mismatches == [
        f"MISMATCH stream {stream} seq {seq} event {event_id}: content does not match its hash (modified)"
    ]


def test_verify_names_a_tampered_blob(db: Path) -> None:
    with raw_sqlite(db) as conn:
        sha, data = conn.execute("SELECT sha256, data FROM blobs LIMIT 1").fetchone()
        raw = zstandard.ZstdDecompressor().decompress(data)
        conn.execute("DROP TRIGGER blobs_no_update")
        conn.execute("UPDATE blobs SET data=? WHERE sha256=?", (zstandard.ZstdCompressor().compress(raw + b"!"), sha))
    bad = invoke(db, "verify")
    assert bad.exit_code == 1 and f"blob {sha} content does not match its hash" in bad.output


def test_export_import_roundtrip_is_idempotent(db: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "december.p2w"
    assert invoke(db, "export", "december", "-o", str(bundle)).exit_code == 0
    other = tmp_path / "laptop.db"
    first = invoke(other, "import", str(bundle))
    assert first.exit_code == 0 and "20 new events" in first.output
    second = invoke(other, "import", str(bundle))
    assert second.exit_code == 0 and "0 new events, 20 already present" in second.output
    assert invoke(other, "verify").exit_code == 0
    exported = json.loads(invoke(db, "export", "december", "-o", str(bundle), "--force", "--json").stdout)
    assert set(exported) == {"run_id", "label", "events", "blobs", "signed_by", "path"}, "nothing is inserted"
    assert (exported["label"], exported["events"], exported["path"]) == ("december", 20, str(bundle))
    imported = json.loads(invoke(other, "import", str(bundle), "--json").stdout)
    assert (imported["events"], imported["inserted"], imported["already_present"]) == (20, 0, 20)
    with raw_sqlite(db) as a, sqlite3.connect(other) as b:
        query = "SELECT event_id, stream, seq, hash FROM events WHERE stream != 'p2w-rt.verified' ORDER BY stream, seq"
        assert a.execute(query).fetchall() == b.execute(query).fetchall()
        assert a.execute("SELECT sha256 FROM blobs").fetchall() == b.execute("SELECT sha256 FROM blobs").fetchall()


def _rewrite_bundle(src: Path, dst: Path, edit) -> None:
    text = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(src.read_bytes())).read().decode()
    lines = [edit(json.loads(line)) for line in text.splitlines()]
    dst.write_bytes(zstandard.ZstdCompressor().compress("\n".join(json.dumps(x) for x in lines).encode() + b"\n"))


def test_tampered_bundle_is_refused_whole(db: Path, tmp_path: Path) -> None:
    bundle = tmp_path / "december.p2w"
    invoke(db, "export", "december", "-o", str(bundle))

    def change_answer(record: dict) -> dict:
        if record.get("event", {}).get("type") == "episode.finished":
            record["event"]["payload"]["answer"] = "forged"
        return record

    def change_blob(record: dict) -> dict:
        if "blob" in record:
            record["data"] = base64.b64encode(b"<html>forged</html>").decode()
        return record

    for name, edit, expected in (
        ("answer", change_answer, "does not match its hash"),
        ("blob", change_blob, "does not match its content"),
    ):
        forged = tmp_path / f"forged-{name}.p2w"
        _rewrite_bundle(bundle, forged, edit)
        target = tmp_path / f"target-{name}.db"
        result = invoke(target, "import", str(forged))
        assert result.exit_code != 0 and expected in result.output and str(forged) in result.output
        if target.exists():
            with raw_sqlite(target) as conn:
                assert conn.execute("SELECT count(*) FROM events").fetchone() == (0,)


def test_garbage_bundle_is_a_clear_error(tmp_path: Path) -> None:
    garbage = tmp_path / "notes.txt"
    garbage.write_text("not a bundle")
    result = invoke(tmp_path / "x.db", "import", str(garbage))
    assert result.exit_code == 1 and "unreadable bundle" in result.output and "Traceback" not in result.output


def test_schema_check_passes_on_committed_files() -> None:
    result = CliRunner().invoke(main, ["schema", "export", "--check"])
    assert result.exit_code == 0, result.output
