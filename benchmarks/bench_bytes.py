"""Bytes per step: the store's events against an Inspect-style log of the same content, and two compact layouts.

The bundled example runs (``p2w_runtime/demo/examples/runs/*.p2w``, recorded by the agent: observations,
``llm.call``s, rationales, actions, history accesses) are imported into a new SQLite store. A step is an
``action`` event. Blobs (page dumps, screenshots) are left out of every figure: they are content-addressed and
zstd-compressed already, and an Inspect log would carry them as attachments the same way.

- **store as rows**: every event a row (how the store wrote before segments; the benchmark sets
  ``SEGMENT_MIN_EVENTS`` out of reach): the ``events`` table and its three indexes (``dbstat``, after ``VACUUM``).
- **store as it writes now**: the same import into a new file, whole episodes stored as segments: ``events`` and
  ``segments`` with their indexes; and the row store after ``migrate`` into a new file (how an existing database
  is compacted).
- **payload JSON**: the canonical payload text alone, uncompressed (what a runner's own JSON roughly holds).
- **Inspect-style .eval** (the baseline): Inspect's ``.eval`` is a zip of JSON members compressed with deflate
  (``header.json``, one ``samples/<id>_epoch_<n>.json`` per sample). ``inspect_ai`` is not installed; the
  benchmark writes the same content that way with ``zipfile`` (``ZIP_DEFLATED``, zlib level 6, as Inspect's
  writer): the run stream as the header, one member per episode with each event's id, type, time, cause and
  payload. No hashes: Inspect has none.
- **compact rows**: what the same events take with binary hashes (32-byte BLOB, ``prev_hash`` not stored: it is the
  previous row's ``hash``), stream and type names interned (integer ids into a ``streams`` / ``types`` table),
  event ids as 16-byte UUIDs and times as integers: a real SQLite table with the same indexes, measured the same
  way. Payloads stay JSON text, so SQL on them keeps working.
- **sealed segments**: each sealed stream as one row of zstd-compressed canonical JSON lines of its events
  (envelope and payload, no hashes) and the stream's head hash; every event's hash is recomputed from the text
  when read (the seal in the run's stream commits to the head, so a changed byte still fails ``verify``).
  Level 3 without and with a dictionary trained on the database's own streams (its bytes counted once).

Also times ``verify`` of the imported store against decoding every segment and recomputing its chain, and the
trade-off segments make: ``read_all``, the projection (``load_trajectories`` of every counted episode) and
``verify`` on the row store and on the segmented store of the same content, in events/s (best of three), the two
alternated in this process, median of five rounds (docs/design/store.md, "Segments", on what once made one process
read the segments 3-10x slower).

``--source import`` measures instead the 450 Browser-Use runner files of ``bench_import.py`` imported as one run
(10 steps each; the shape the issue's 2,370 B a step came from: short payloads, where the envelope dominates).

Usage: python benchmarks/bench_bytes.py [--source examples|import]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import io
import os
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
import zipfile
from collections import defaultdict
from collections.abc import Awaitable, Callable
from contextlib import closing
from pathlib import Path

import orjson
import structlog
import zstandard

sys.path.insert(0, str(Path(__file__).parent))

import bench_import  # noqa: E402

from p2w_rt.schemas import GENESIS_HASH, StoredEvent  # noqa: E402
from p2w_runtime.collector import collector_frozen  # noqa: E402
from p2w_runtime.domain import episodes_of, list_runs  # noqa: E402
from p2w_runtime.domain.trajectory import load_trajectories  # noqa: E402
from p2w_runtime.importers import import_trajectories  # noqa: E402
from p2w_runtime.store import EventStore, _segments, import_bundle, migrate_store, open_store, verify_store  # noqa: E402

RUNS = Path(__file__).resolve().parents[1] / "p2w_runtime" / "demo" / "examples" / "runs"
ROUNDS = 5


def table_bytes(db: Path, tables: tuple[str, ...]) -> int:
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("VACUUM")
        names = [row[0] for row in conn.execute("SELECT name, tbl_name FROM sqlite_master") if row[1] in tables]
        marks = ",".join("?" * len(names))
        return conn.execute(f"SELECT sum(pgsize) FROM dbstat WHERE name IN ({marks})", names).fetchone()[0] or 0


def inspect_style(events: list[StoredEvent]) -> int:
    """The events as Inspect ``.eval`` files, one per run: a deflated zip of JSON, the run's own stream as the
    header, an episode per sample. Streams outside runs (derived passes) go in as one more file."""
    by_run: dict[str, dict[str, list[dict[str, object]]]] = defaultdict(lambda: defaultdict(list))
    for e in events:
        by_run[e.stream.split("/", 1)[0]][e.stream].append(
            {"uuid": e.event_id, "event": e.type, "timestamp": e.recorded_at, "cause": e.causation_id,
             "data": orjson.Fragment(e.payload_json)}
        )  # fmt: skip
    total = 0
    for streams in by_run.values():
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as zipped:
            for stream, items in sorted(streams.items()):
                name = "header.json" if "/" not in stream else f"samples/{stream.split('/', 1)[1]}_epoch_1.json"
                zipped.writestr(name, orjson.dumps({"id": stream, "events": items}))
        total += len(out.getvalue())
    return total


def _uuid_bytes(value: str | None) -> bytes | None:
    if value is None:
        return None
    try:
        return uuid.UUID(value).bytes
    except ValueError:
        return value.encode()


def compact_rows(events: list[StoredEvent], db: Path) -> int:
    conn = sqlite3.connect(db)
    conn.executescript(
        "CREATE TABLE streams (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);"
        "CREATE TABLE types (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);"
        "CREATE TABLE events (position INTEGER PRIMARY KEY, event_id BLOB NOT NULL UNIQUE,"
        " stream_id INTEGER NOT NULL, seq INTEGER NOT NULL, type_id INTEGER NOT NULL, schema_version INTEGER NOT NULL,"
        " recorded_at INTEGER NOT NULL, causation_id BLOB, payload TEXT NOT NULL, blobs TEXT, hash BLOB NOT NULL,"
        " UNIQUE (stream_id, seq));"
        "CREATE INDEX ix_events_type ON events (type_id);"
    )
    streams: dict[str, int] = {}
    types: dict[str, int] = {}
    rows = []
    for e in events:
        sid = streams.setdefault(e.stream, len(streams) + 1)
        tid = types.setdefault(e.type, len(types) + 1)
        micros = int(time.mktime(time.strptime(e.recorded_at[:19], "%Y-%m-%dT%H:%M:%S")) * 1_000_000)
        blobs = orjson.dumps(e.blobs).decode() if e.blobs else None
        rows.append((e.position, _uuid_bytes(e.event_id), sid, e.seq, tid, e.schema_version, micros,
                     _uuid_bytes(e.causation_id), e.payload_json, blobs, bytes.fromhex(e.hash)))  # fmt: skip
    conn.executemany("INSERT INTO streams VALUES (?, ?)", [(i, n) for n, i in streams.items()])
    conn.executemany("INSERT INTO types VALUES (?, ?)", [(i, n) for n, i in types.items()])
    conn.executemany(f"INSERT INTO events VALUES ({','.join('?' * 11)})", rows)
    conn.commit()
    conn.close()
    return table_bytes(db, ("streams", "types", "events"))


def segment_text(events: list[StoredEvent]) -> bytes:
    """A stream's events as JSON lines of everything its hashes are computed over, except the hashes."""
    return b"\n".join(
        orjson.dumps([e.event_id, e.type, e.schema_version, e.recorded_at, e.causation_id,
                      orjson.Fragment(e.payload_json), e.blobs])
        for e in events
    )  # fmt: skip


def decode_and_check(stream: str, data: bytes, head: str, decompress: zstandard.ZstdDecompressor) -> int:
    """Rebuild a segment's events and recompute their chain: what ``verify`` and readers would do."""
    prev = GENESIS_HASH
    lines = decompress.decompress(data).split(b"\n")
    for seq, line in enumerate(lines, 1):
        event_id, type_, version, recorded_at, cause, payload, blobs = orjson.loads(line)
        event = StoredEvent(event_id, stream, seq, None, type_, version, recorded_at, cause,
                            orjson.dumps(payload, option=orjson.OPT_SORT_KEYS).decode(), blobs, prev, "")  # fmt: skip
        prev = event.compute_hash()
    if prev != head:
        raise AssertionError(f"{stream}: recomputed head differs")
    return len(lines)


async def fill(store: EventStore, source: str, tmp: Path) -> None:
    if source == "examples":
        for bundle in sorted(RUNS.glob("*.p2w")):
            await import_bundle(store, bundle)
        return
    history, trajectories, _ = bench_import.write_inputs(tmp)
    await import_trajectories(
        store, sorted(trajectories.glob("*.json")), fmt="p2w-browser-use", tasks_dir=bench_import.TASKS,
        history_dir=history, label="bytes",
    )  # fmt: skip


async def filled(db: Path, source: str, tmp: Path, *, segments: bool) -> None:
    """``db`` with the source imported: whole episodes as segments, as the store writes, or every event a row."""
    kept = _segments.SEGMENT_MIN_EVENTS
    _segments.SEGMENT_MIN_EVENTS = kept if segments else 10**9
    try:
        (tmp / db.stem).mkdir()
        async with open_store(db) as store:
            await fill(store, source, tmp / db.stem)
    finally:
        _segments.SEGMENT_MIN_EVENTS = kept


async def _best(repeat: int, work: Callable[[], Awaitable[int]]) -> tuple[int, float]:
    """How many events ``work`` handles, and its best time over ``repeat`` runs."""
    best = float("inf")
    count = 0
    for _ in range(repeat):
        started = time.perf_counter()
        count = await work()
        best = min(best, time.perf_counter() - started)
    return count, best


async def speeds(db: Path, repeat: int = 3) -> dict[str, float]:
    """Events/s of ``read_all``, the projection of every counted episode, and ``verify``, on the store in ``db``,
    with what the process held before out of the collector's scans (``collector_frozen``): the events this benchmark
    keeps made a full collection cost ~130 ms, and whether one fell in a timed read decided its figure."""
    async with open_store(db, create=False) as store:

        async def read_all() -> int:
            return sum([1 async for _ in store.read_all()])

        async def project() -> int:
            events = 0
            for run in await list_runs(store):
                streams = [ref.stream for ref in await episodes_of(store, run.run_id)]
                heads = {head.stream: head.last_seq for head in await store.list_streams(f"{run.run_id}/")}
                events += sum(heads[stream] for stream in streams)
                async for _trajectory in load_trajectories(store, run.run_id, streams=streams):
                    pass
            return events

        async def verify() -> int:
            report = await verify_store(store)
            assert report.ok, report.problems[:3]
            return report.events

        figures = {}
        for name, work in (("read_all", read_all), ("projection", project), ("verify", verify)):
            gc.collect()
            with collector_frozen():
                count, seconds = await _best(repeat, work)
            figures[name] = count / seconds
        return figures


async def measure(tmp: Path, source: str) -> None:
    db, row_db, migrated_db = tmp / "store.db", tmp / "rows_store.db", tmp / "migrated.db"
    await filled(row_db, source, tmp, segments=False)
    await filled(db, source, tmp, segments=True)
    async with open_store(row_db, create=False) as rows_store, open_store(migrated_db) as migrated:
        await migrate_store(rows_store, migrated)
    async with open_store(db) as store:
        events = [e async for e in store.read_all()]
        started = time.perf_counter()
        assert (await verify_store(store)).ok
        verify_s = time.perf_counter() - started
    steps = sum(1 for e in events if e.type == "action")
    store_bytes = table_bytes(row_db, ("events",))
    segmented_bytes = table_bytes(db, ("events", "segments"))
    migrated_bytes = table_bytes(migrated_db, ("events", "segments"))
    payload = sum(len(e.payload_json.encode()) for e in events)
    inspect = inspect_style(events)
    rows = compact_rows(events, tmp / "rows.db")

    streams: dict[str, list[StoredEvent]] = defaultdict(list)
    for e in events:
        streams[e.stream].append(e)
    texts = {s: segment_text(es) for s, es in streams.items()}
    plain = {s: zstandard.ZstdCompressor(level=3).compress(t) for s, t in texts.items()}
    samples = [line for t in texts.values() for line in t.split(b"\n")]
    trained = zstandard.train_dictionary(16_384, samples)
    with_dict = {s: zstandard.ZstdCompressor(level=3, dict_data=trained).compress(t) for s, t in texts.items()}
    per_row = 32 + 16  # the head hash, the stream id and seq range
    seg_plain = sum(len(d) + per_row for d in plain.values())
    seg_dict = sum(len(d) + per_row for d in with_dict.values()) + len(trained.as_bytes())
    started = time.perf_counter()
    decompress = zstandard.ZstdDecompressor(dict_data=trained)
    checked = sum(decode_and_check(s, d, streams[s][-1].hash, decompress) for s, d in with_dict.items())
    decode_s = time.perf_counter() - started
    assert checked == len(events)

    print(f"load {os.getloadavg()[0]:.2f}; {source}: {len(events)} events, {steps} steps, {len(streams)} streams")
    print(f"{'layout':58s} {'B/step':>7s} {'vs .eval':>8s}")
    for name, size in [
        ("store as rows (events table + indexes)", store_bytes),
        ("store as it writes now (events + segments + indexes)", segmented_bytes),
        ("the row store after migrate into a new file", migrated_bytes),
        ("payload JSON alone, uncompressed", payload),
        ("Inspect-style .eval (zip of JSON, deflate): baseline", inspect),
        ("compact rows (binary hashes, interned names, + indexes)", rows),
        ("sealed segments, zstd 3", seg_plain),
        ("sealed segments, zstd 3 + trained dictionary (counted)", seg_dict),
    ]:
        print(f"{name:58s} {size / steps:7.0f} {size / inspect:7.2f}x")
    print(f"verify of the store: {len(events) / verify_s:9.0f} events/s")
    print(f"segments decoded + chain recomputed: {len(events) / decode_s:9.0f} events/s "
          f"({verify_s / decode_s:.2f}x verify's rate)")  # fmt: skip
    runs: dict[str, list[dict[str, float]]] = {"rows": [], "segments": []}
    for _ in range(ROUNDS):  # alternated in this process
        for layout, path in (("rows", row_db), ("segments", db)):
            runs[layout].append(await speeds(path))
    print(f"{f'events/s (median of {ROUNDS} rounds)':36s} {'rows':>9s} {'segments':>9s} {'ratio':>6s}")
    for name in runs["rows"][0]:
        as_rows = statistics.median(r[name] for r in runs["rows"])
        as_segments = statistics.median(r[name] for r in runs["segments"])
        print(f"{name:36s} {as_rows:9.0f} {as_segments:9.0f} {as_segments / as_rows:5.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", choices=["examples", "import"], default="examples")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(30))  # no line per imported episode
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(measure(Path(tmp), args.source))


if __name__ == "__main__":
    main()
