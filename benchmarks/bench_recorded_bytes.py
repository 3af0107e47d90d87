"""Bytes per step of a run as recorded, against Inspect AI's ``.eval`` of the same content written by ``inspect-ai``.

The bundled example runs (``p2w_runtime/demo/examples/runs/*.p2w``, recorded by the agent, 24 episodes) are read
back and appended again into new SQLite stores the way a recording writes them: in the order they were recorded
(their times; an import gathers each episode's events), a step's events (up to its ``action``) one append (the
agent's flush), each finished episode then sealed in its run's stream (``append_sealed``). Once with
``P2W_COMPACT=off`` (every event a row: how a recording wrote before compaction) and once as recordings now write
(each episode compacted once sealed). A step is an ``action`` event; bytes are the
``events`` and ``segments`` tables with their indexes (``dbstat`` after ``VACUUM``), blobs left out as in
``bench_bytes.py`` (content-addressed and compressed already; Inspect would carry them as attachments).

The anchor is written by Inspect itself: each run an ``EvalLog`` with one sample per episode whose events are
``InfoEvent``s (source: our event type, data: its payload, with its uuid and time), the run's own stream in the
log's metadata, by ``write_eval_log(..., format="eval")`` (``_inspect_eval.py``). ``inspect-ai`` is installed for
this benchmark only, in a virtual environment of its own (``--inspect-venv``, made on first use).

The same anchor, of the same content, against runs as imported (``bench_bytes.py``'s two sources: the example runs'
bundles, and ``bench_import.py``'s 450 Browser-Use runner files), whose episodes are written whole as segments.

Usage: python benchmarks/bench_recorded_bytes.py [--inspect-venv DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import structlog

sys.path.insert(0, str(Path(__file__).parent))

from _bench_venv import CACHE, peer_python  # noqa: E402
from bench_bytes import RUNS, fill, table_bytes  # noqa: E402

from p2w_rt.schemas import NewEvent, StoredEvent  # noqa: E402
from p2w_runtime.domain import append_sealed  # noqa: E402
from p2w_runtime.store import EventStore, import_bundle, open_store  # noqa: E402

INSPECT_VERSION = "0.3.285"
HERE = Path(__file__).parent


async def examples(tmp: Path) -> tuple[list[StoredEvent], dict[str, bytes]]:
    """The example runs' events in the order they were recorded, and every blob they reference."""
    async with open_store(tmp / "examples.db") as store:
        for bundle in sorted(RUNS.glob("*.p2w")):
            await import_bundle(store, bundle)
        events = sorted([e async for e in store.read_all()], key=lambda e: (e.recorded_at, e.stream, e.seq))
        blobs = {sha: await store.get_blob(sha) for e in events for sha in e.blobs}
    return events, blobs


def flushes(events: list[StoredEvent]) -> list[list[StoredEvent]]:
    """The events cut where the stream changes and after each step's ``action``: what a recording appends at once."""
    out: list[list[StoredEvent]] = []
    for event in events:
        if out and out[-1][-1].stream == event.stream and out[-1][-1].type != "action":
            out[-1].append(event)
        else:
            out.append([event])
    return out


async def record(store: EventStore, events: list[StoredEvent], blobs: dict[str, bytes]) -> None:
    sent: set[str] = set()
    for batch in flushes(events):
        new = [
            NewEvent(event_id=e.event_id, stream=e.stream, payload=e.decode().payload, causation_id=e.causation_id,
                     recorded_at=e.recorded_at)  # type: ignore[arg-type]
            for e in batch
        ]  # fmt: skip
        needed = {sha: blobs[sha] for e in batch for sha in e.blobs if sha not in sent}
        sent.update(needed)
        await append_sealed(store, new, needed)


async def recorded_bytes(db: Path, events: list[StoredEvent], blobs: dict[str, bytes], *, compact: bool) -> int:
    os.environ["P2W_COMPACT"] = "on" if compact else "off"
    async with open_store(db) as store:
        await record(store, events, blobs)
    return table_bytes(db, ("events", "segments"))


async def imported_bytes(tmp: Path, source: str) -> tuple[list[StoredEvent], int]:
    """``source`` imported as ``bench_bytes.py`` imports it (the example runs' bundles, or the Browser-Use runner
    files of ``bench_import.py``) into a new store: its events and the bytes of its tables."""
    db, inputs = tmp / f"imported-{source}.db", tmp / f"inputs-{source}"
    inputs.mkdir()
    async with open_store(db) as store:
        await fill(store, source, inputs)
        events = [e async for e in store.read_all()]
    return events, table_bytes(db, ("events", "segments"))


def inspect_bytes(events: list[StoredEvent], python: Path, tmp: Path) -> int:
    """Inspect's ``.eval`` logs of the runs, one per run, written by ``inspect-ai``: their total size."""
    tmp.mkdir()
    source = tmp / "runs.jsonl"
    with source.open("w") as out:
        for e in events:
            item = [e.stream, e.event_id, e.type, e.recorded_at, e.causation_id, json.loads(e.payload_json)]
            out.write(json.dumps(item) + "\n")
    done = subprocess.run(
        [str(python), str(HERE / "_inspect_eval.py"), str(source), str(tmp / "eval")],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return int(done.stdout.split()[-1])


async def measure(tmp: Path, venv: Path) -> None:
    events, blobs = await examples(tmp)
    steps = sum(e.type == "action" for e in events)
    rows = await recorded_bytes(tmp / "rows.db", events, blobs, compact=False)
    compacted = await recorded_bytes(tmp / "compacted.db", events, blobs, compact=True)
    python = peer_python(venv, f"inspect-ai=={INSPECT_VERSION}")
    anchor = inspect_bytes(events, python, tmp / "recorded")
    runs = len(list(RUNS.glob("*.p2w")))
    print(f"load {os.getloadavg()[0]:.2f}; {len(events):,} events, {steps} steps (actions) in {runs} runs")
    show("as recorded", steps, anchor, {
        "store, rows (P2W_COMPACT=off)": rows,
        "store, compacted as recorded (default)": compacted,
    })  # fmt: skip
    for source, name in (("examples", "the example runs' bundles"), ("import", "Browser-Use runner files")):
        events, size = await imported_bytes(tmp, source)
        steps = sum(e.type == "action" for e in events)
        anchor = inspect_bytes(events, python, tmp / f"anchor-{source}")
        show(f"imported: {name}", steps, anchor, {f"store, {len(events):,} events imported": size})


def show(title: str, steps: int, anchor: int, sizes: dict[str, int]) -> None:
    print(f"{title:42} {'bytes':>10} {'B/step':>8} {'vs .eval':>9}")
    for name, size in {f"Inspect .eval (inspect-ai {INSPECT_VERSION})": anchor, **sizes}.items():
        print(f"  {name:40} {size:>10,} {size / steps:>8,.0f} {size / anchor:>8.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default = CACHE / "inspect-venv"
    parser.add_argument("--inspect-venv", type=Path, default=default, help=f"default: {default}")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(30))
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(measure(Path(tmp), args.inspect_venv))


if __name__ == "__main__":
    main()
