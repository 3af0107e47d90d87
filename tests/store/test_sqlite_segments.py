"""SQLite's segments as stored: a whole stream in one row, append-only, and any changed byte fails ``verify``."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
import zstandard
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.schemas import StoredEvent
from p2w_runtime.store import connect_store, open_store, verify_store
from p2w_runtime.store._segments import SEGMENT_MIN_EVENTS
from p2w_runtime.store.contract.builders import collect, observation, rationale
from tests.helpers.raw_sqlite import raw_sqlite

RUN = SEGMENT_MIN_EVENTS + 4


async def _written(path: Path) -> list[StoredEvent]:
    store = await connect_store(path)
    try:
        whole = await store.append([observation("r1/e1", n) for n in range(RUN)])
        steps = await store.append([observation("r1/e2", 1), rationale("r1/e2", 1)])
        return whole + steps
    finally:
        await store.close()


async def test_a_stream_appended_whole_is_one_segments_row_and_a_step_stays_rows(tmp_path: Path) -> None:
    path = tmp_path / "p2w.db"
    await _written(path)
    with raw_sqlite(path) as raw:
        assert raw.execute("SELECT stream, seq FROM events ORDER BY position").fetchall() == [
            ("r1/e1", 1),  # a write's first event is a row
            ("r1/e2", 1),
            ("r1/e2", 2),
        ]
        assert raw.execute(
            "SELECT stream, first_seq, last_seq, first_position, last_position FROM segments"
        ).fetchall() == [("r1/e1", 2, RUN, 2, RUN)]


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE segments SET data = x'00'",
        "DELETE FROM segments",
        "INSERT OR REPLACE INTO segments SELECT * FROM segments",
    ],
)
async def test_segments_are_append_only_in_the_database(tmp_path: Path, statement: str) -> None:
    path = tmp_path / "p2w.db"
    await _written(path)
    with raw_sqlite(path) as raw, pytest.raises(sqlite3.IntegrityError, match="append-only"):
        raw.execute(statement)


def _tamper(path: Path, change: bytes) -> None:
    with raw_sqlite(path) as raw:
        raw.execute("DROP TRIGGER segments_no_update")
        raw.execute("UPDATE segments SET data = ?", (change,))


async def _problems(path: Path) -> list[str]:
    async with open_store(path, create=False) as store:
        report = await verify_store(store)
    return [str(problem) for problem in report.problems]


async def test_a_flipped_byte_in_a_segment_fails_verify_naming_its_stream(tmp_path: Path) -> None:
    path = tmp_path / "p2w.db"
    await _written(path)
    assert await _problems(path) == []
    with raw_sqlite(path) as raw:
        (data,) = raw.execute("SELECT data FROM segments").fetchone()
    flipped = bytearray(data)
    flipped[len(flipped) // 2] ^= 0x01
    _tamper(path, bytes(flipped))
    (problem,) = await _problems(path)
    assert problem.startswith("stream r1/e1 seq 2") and "segment unreadable" in problem


async def test_a_segment_rewritten_with_changed_content_fails_verify_at_its_last_event(tmp_path: Path) -> None:
    path = tmp_path / "p2w.db"
    await _written(path)
    with raw_sqlite(path) as raw:
        (data,) = raw.execute("SELECT data FROM segments").fetchone()
    text = zstandard.ZstdDecompressor().decompress(data)
    assert b"page 7" in text
    _tamper(path, zstandard.ZstdCompressor(level=3).compress(text.replace(b"page 7", b"page 8")))
    (problem,) = await _problems(path)
    assert problem.startswith(f"stream r1/e1 seq {RUN} ") and "modified" in problem


async def test_verify_hashes_each_event_of_a_segment_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A segment stores only its last event's hash: reading it computes every other event's hash from its content
    (``hash_derived``), which ``verify`` does not compute again; the last one's, the only one that can differ from
    what is stored, is still compared (the test above)."""
    path = tmp_path / "p2w.db"
    written = await _written(path)
    computed: list[tuple[str, int]] = []
    compute = StoredEvent.compute_hash

    def counted(event: StoredEvent) -> str:
        computed.append((event.stream, event.seq))
        return compute(event)

    monkeypatch.setattr(StoredEvent, "compute_hash", counted)
    assert await _problems(path) == []
    segment = [(e.stream, e.seq) for e in written if e.stream == "r1/e1" and e.seq > 1]
    rows = [(e.stream, e.seq) for e in written if (e.stream, e.seq) not in segment]
    assert sorted(computed) == sorted(segment + rows + [segment[-1]])  # the segment's last: read, then checked


async def test_a_file_without_the_segments_table_opened_read_only_reads_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "p2w.db"
    store = await connect_store(path)
    try:
        written = await store.append([observation("r1", n) for n in range(3)])
    finally:
        await store.close()
    with raw_sqlite(path) as raw:  # as a file of the earlier schema
        for trigger in ("segments_no_update", "segments_no_delete", "segments_no_replace"):
            raw.execute(f"DROP TRIGGER {trigger}")
        raw.execute("DROP TABLE segments")
    store = await connect_store(path, create=False, read_only=True)
    try:
        assert await collect(store.read_all()) == written
        assert await collect(store.read_stream("r1")) == written
        assert await store.read_event("r1", 2) == written[1]
        assert await store.count() == (3, 0)
        assert await store.log_end() == 3
        assert (await verify_store(store)).ok
    finally:
        await store.close()
    store = await connect_store(path, create=False)  # a writer adds the table
    try:
        more = await store.append([observation("r2", n) for n in range(RUN)])
        assert await collect(store.read_all()) == written + more
    finally:
        await store.close()


def test_a_deleted_segment_is_named_by_the_seals_of_its_run(tmp_path: Path) -> None:
    """An imported episode is a segment: deleting it (its first event is a row) leaves a stream its seals name."""
    path = tmp_path / "ex.db"
    result = CliRunner().invoke(
        main,
        ["--db", str(path), "import-trajectories", "--examples", "--format", "p2w-agentoccam", "--label", "ex"],
    )
    assert result.exit_code == 0, result.output
    with raw_sqlite(path) as raw:
        raw.execute("DROP TRIGGER segments_no_delete")
        (stream, first_seq) = raw.execute("SELECT stream, first_seq FROM segments LIMIT 1").fetchone()
        raw.execute("DELETE FROM segments WHERE stream = ?", (stream,))
    problems = asyncio.run(_problems(path))
    assert first_seq == 2
    assert any(p.startswith(f"stream {stream} seq 1") and "sealed by run.finished" in p for p in problems), problems
