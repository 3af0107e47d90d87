"""A bundle file as the bundle tests read and rewrite it: its JSON lines out of zstd and back, its events edited and
every hash, chain link and seal made consistent again, as a forger would."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import zstandard

from p2w_rt.schemas import GENESIS_HASH, StoredEvent
from tests.helpers.raw_sqlite import raw_sqlite

P2W_RT = str(Path(sys.executable).with_name("p2w-rt"))
"""The installed command, for the tests that need a process of its own."""
_SEAL_TYPES = ("run.finished", "streams.sealed")


def read_lines(bundle: Path) -> list[dict[str, Any]]:
    text = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(bundle.read_bytes())).read().decode()
    return [json.loads(line) for line in text.splitlines()]


def write_lines(bundle: Path, records: list[Any]) -> None:
    body = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)
    bundle.write_bytes(zstandard.ZstdCompressor().compress(body.encode()))


def forge(records: list[dict[str, Any]], edit: Callable[[dict[str, Any]], None]) -> list[dict[str, Any]]:
    """Edit events, then recompute every hash, chain link and seal: a bundle consistent again.

    The run's own stream comes first in a bundle, so its seal refers to streams further down: a second round
    seals the heads the first one settled.
    """
    events = [record["event"] for record in records if "event" in record]
    for event in events:
        edit(event)
    final: dict[str, tuple[int, str]] = {}
    for _ in range(2):
        heads: dict[str, tuple[int, str]] = {}
        for event in events:
            event["prev_hash"] = heads.get(event["stream"], (0, GENESIS_HASH))[1]
            if event["type"] in _SEAL_TYPES and event["payload"].get("seals") and final:
                event["payload"]["seals"] = [
                    {"stream": s["stream"], "events": final[s["stream"]][0], "head_hash": final[s["stream"]][1]}
                    for s in event["payload"]["seals"]
                ]
            event["hash"] = StoredEvent.from_dict(event).compute_hash()
            heads[event["stream"]] = (event["seq"], event["hash"])
        final = heads
    return records


def events_in(db: Path) -> int:
    """How many events an import left in ``db`` (none when it made no file)."""
    if not db.exists():
        return 0
    with raw_sqlite(db) as conn:
        return conn.execute("SELECT count(*) FROM events").fetchone()[0]
