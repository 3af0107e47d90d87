"""Recompute every hash chain and blob hash: the proof that nothing was changed after recording."""

from __future__ import annotations

from dataclasses import dataclass, field

import zstandard

from p2w_runtime.store._recorder import Recorder
from p2w_runtime.store._runs import run_events
from schemas import GENESIS_HASH, blob_hash


@dataclass(frozen=True, slots=True)
class Problem:
    """One broken link: where it is and what is wrong."""

    stream: str
    seq: int | None
    event_id: str | None
    reason: str

    def __str__(self) -> str:
        where = f"stream {self.stream}" + (f" seq {self.seq}" if self.seq is not None else "")
        return f"{where}" + (f" event {self.event_id}" if self.event_id else "") + f": {self.reason}"


@dataclass
class VerifyReport:
    streams: int = 0
    events: int = 0
    blobs: int = 0
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


async def verify_store(store: Recorder, run_id: str | None = None) -> VerifyReport:
    """Check chains (seq gap-free from 1, prev_hash links, recomputed hashes) and blobs.

    With ``run_id``, only that run's streams and the blobs they reference are checked.
    One pass in position order; memory holds one head per stream, not the events.
    """
    report = VerifyReport()
    heads: dict[str, tuple[int, str]] = {}
    referenced: set[str] = set()
    async for event in store.read_all() if run_id is None else run_events(store, run_id):
        report.events += 1
        last_seq, last_hash = heads.get(event.stream, (0, GENESIS_HASH))
        if event.seq != last_seq + 1:
            report.problems.append(
                Problem(event.stream, event.seq, event.event_id, f"seq {event.seq} follows {last_seq}: gap or reorder")
            )
        elif event.prev_hash != last_hash:
            report.problems.append(
                Problem(event.stream, event.seq, event.event_id, "prev_hash does not match the previous event's hash")
            )
        if event.compute_hash() != event.hash:
            report.problems.append(
                Problem(event.stream, event.seq, event.event_id, "content does not match its hash (modified)")
            )
        heads[event.stream] = (event.seq, event.hash)
        referenced.update(event.blobs)
    report.streams = len(heads)
    hashes = sorted(referenced) if run_id else [h async for h in store.blob_hashes()]
    for sha in hashes:
        report.blobs += 1
        try:
            data = await store.get_blob(sha)
        except KeyError:
            report.problems.append(Problem("blobs", None, None, f"blob {sha} is referenced but missing"))
            continue
        except zstandard.ZstdError as exc:
            report.problems.append(Problem("blobs", None, None, f"blob {sha} cannot be decompressed ({exc})"))
            continue
        if blob_hash(data) != sha:
            report.problems.append(Problem("blobs", None, None, f"blob {sha} content does not match its hash"))
    if run_id is None:
        for sha in sorted(referenced - set(hashes)):
            report.problems.append(Problem("blobs", None, None, f"blob {sha} is referenced but missing"))
    return report
