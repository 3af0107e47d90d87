"""The whole store's ``verify``: after the last verify mark when there is a usable one, else every event; either
way the mark to append if nothing is wrong (docs/design/integrity.md, "Incremental verify").

After a mark at position P, three things are checked, none of them reading the events before P:

- every stream's head as of P, by one digest: streams with no event after P end where they end now (the heads
  index, rows and segments alike), the others just before their first event after P (its seq and ``prev_hash``,
  and the event there read by index: still stored, hash matching its content, not ending its stream); a rewrite
  that recomputed a stream's hashes, a removed stream or a cut tail changes it;
- how many events are at or before P (all of them, less those after), and that no blob went missing;
- every event after P, fully, chained to those heads: hash, payload, seals, the blobs it references.

What it cannot see is an edit before P that leaves the stored hash columns as they were (a payload changed in
place, a blob's bytes): only ``--full`` reads those.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from p2w_rt.schemas import StoredEvent, StoreVerified
from p2w_runtime.store._chain import MODIFIED
from p2w_runtime.store._event_store import EventStore
from p2w_runtime.store._segments import CorruptSegment
from p2w_runtime.store._tree import tree_root
from p2w_runtime.store._verified_mark import MARK_STREAM, heads_digest, last_mark, signed, signer
from p2w_runtime.store._verify import (
    ChainPass,
    Problem,
    UnsealedTail,
    VerifyReport,
    check_blobs,
    finish_pass,
    full_pass,
)

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

SNAPSHOT_TRIES = 5
"""Reads of the heads and counts between two equal log ends before a busy store is checked in full instead."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The log as of position ``end``: every stream's head, and how many events and blobs it holds."""

    end: int
    heads: dict[str, tuple[int, str]]
    events: int
    blobs: int


async def snapshot(store: EventStore) -> Snapshot | None:
    """Heads and counts read while the log's end stayed where it was (a compaction moves no position, changes no
    head or count), else None when appends kept coming."""
    for _ in range(SNAPSHOT_TRIES):
        end = await store.log_end()
        heads = {head.stream: (head.last_seq, head.last_hash) for head in await store.list_streams()}
        events, blobs = await store.count()
        if await store.log_end() == end:
            return Snapshot(end, heads, events, blobs)
    return None


async def verify_whole_store(
    store: EventStore,
    *,
    full: bool = False,
    trusted: bytes | None = None,
    key: Ed25519PrivateKey | None = None,
    collect: Collection[str] = (),
) -> VerifyReport:
    """Check the whole store, incrementally after its last usable mark unless ``full``; the report carries the mark
    to append (signed with ``key``), or none when an incremental check found nothing new to vouch for.

    ``trusted`` (a raw Ed25519 public key): only a mark that key signed is a starting point. A check that reads the
    whole log keeps its events of the ``collect`` types (``report.collected``), for the caller's own fold."""
    found = None if full else await last_mark(store)
    taken = None if full else await snapshot(store)
    because = "--full" if full else _unusable(found, taken, trusted)
    if because is None and found is not None and found[1] is not None and taken is not None:
        # an unchanged store's check appends nothing, unless the mark is to be signed by a key that did not sign it
        resign = key is not None and signer(found[1]) != key.public_key().public_bytes_raw()
        report = await _since(store, found[1], taken, resign=resign)
    else:
        report = await _full(store, await store.log_end(), frozenset(collect))
        report.full_because = because
    if report.mark is not None and key is not None:
        report.mark = signed(report.mark, key)
    return report


def _unusable(
    found: tuple[StoredEvent, StoreVerified | None] | None, taken: Snapshot | None, trusted: bytes | None
) -> str | None:
    """Why the whole store must be checked, or None when the last mark is a starting point."""
    if found is None:
        return "no earlier verify mark"
    event, mark = found
    if mark is None:
        return "the last verify mark does not read"
    if mark.position >= (event.position or 0):
        return "the last verify mark claims positions after its own"
    if taken is None:
        return "appends kept coming while the heads were read"
    if trusted is not None and signer(mark) != trusted:
        return "the last verify mark is not signed by the trusted key"
    return None


async def _full(store: EventStore, end: int, collect: frozenset[str]) -> VerifyReport:
    from p2w_runtime.store._verify_parallel import parallel_pass  # worker processes: only for a full check

    spread = await parallel_pass(store, VerifyReport(through=end), end, collect)
    if spread is None:
        report, chain = await full_pass(store, None, end, collect)
    else:
        chain, corrupt = spread
        report = chain.report
        if not corrupt:
            await finish_pass(store, chain, None)
            report.collected = chain.collected if collect else None
    if end and report.ok:
        uncovered = {stream: n for tail in report.tails for stream, n in tail.streams.items()}
        report.mark = StoreVerified(
            position=end, events=report.events, blobs=report.blobs, streams=len(chain.heads),
            heads=heads_digest(chain.heads), full=True, uncovered=uncovered, unsealed=report.unsealed,
            runs=sorted(chain.runs),
        )  # fmt: skip
    return report


async def _since(store: EventStore, mark: StoreVerified, taken: Snapshot, *, resign: bool) -> VerifyReport:
    """The check after ``mark``; the next mark only when it read new events (or ``resign``: the same, signed by
    another key), since the last one still says all there is of an unchanged store."""
    report = VerifyReport(incremental=True, since=mark.position, through=taken.end)
    chain = ChainPass(report)
    first: dict[str, tuple[int, str]] = {}
    """Stream -> its head just before its first event after the mark (seq 0: a stream begun since)."""
    read = 0
    events = store.read_all(after_position=mark.position)
    try:
        async for event in events:
            if (event.position or 0) > taken.end:
                break
            read += 1
            if event.stream == MARK_STREAM:
                report.marks += 1
            else:
                report.events += 1
            if event.stream not in first:
                first[event.stream] = (event.seq - 1, event.prev_hash)
                if event.seq > 1:
                    chain.heads[event.stream] = first[event.stream]
                    await _check_head(store, chain, event)
            chain.check(event)
    except CorruptSegment as exc:
        report.problems.append(Problem(exc.stream, exc.first_seq, None, str(exc)))
        return report
    finally:
        await events.aclose()  # type: ignore[attr-defined]  # an async generator behind EventStore's AsyncIterator
    at_mark = {s: head for s, head in taken.heads.items() if s not in first}
    at_mark.update((s, head) for s, head in first.items() if head[0] > 0)
    _compare(report, mark, at_mark, taken.events - read, taken.blobs)
    heads = taken.heads | chain.heads
    report.streams = len(first.keys() - {MARK_STREAM})
    await chain.check_seals(store, heads)
    await check_blobs(store, report, sorted(chain.referenced))
    uncovered = await _uncovered(store, mark, chain, first, at_mark, heads)
    report.unsealed = sorted((set(mark.unsealed) | chain.runs) - chain.sealed_runs())
    by_run: dict[str, dict[str, int]] = {}
    for stream in sorted(uncovered):
        by_run.setdefault(tree_root(stream), {})[stream] = uncovered[stream]
    runs = sorted(set(mark.runs) | chain.runs | by_run.keys())
    report.tails = [UnsealedTail(run, by_run.get(run, {})) for run in runs]
    if report.ok and (report.events or resign):
        report.mark = StoreVerified(
            position=taken.end, events=taken.events, blobs=taken.blobs, streams=len(heads),
            heads=heads_digest(heads), full=False, since=mark.position, uncovered=uncovered,
            unsealed=report.unsealed, runs=runs,
        )  # fmt: skip
    return report


async def _check_head(store: EventStore, chain: ChainPass, event: StoredEvent) -> None:
    """The event a stream's first new one follows (verified before, read by index): still there, the one it links
    to, its hash still its content's; and whether it ended its stream."""
    problems = chain.report.problems
    before = await store.read_event(event.stream, event.seq - 1)
    if before is None:
        problems.append(Problem(event.stream, event.seq, event.event_id, f"seq {event.seq - 1} before it is missing"))
        return
    if before.hash != event.prev_hash:
        unlinked = "prev_hash does not match the previous event's hash"
        problems.append(Problem(event.stream, event.seq, event.event_id, unlinked))
    if not before.hash_matches():
        problems.append(Problem(before.stream, before.seq, before.event_id, MODIFIED))
    chain.ends.problem(before)  # notes the end of its stream, if it is one


def _compare(
    report: VerifyReport, mark: StoreVerified, at_mark: dict[str, tuple[int, str]], events: int, blobs: int
) -> None:
    """What the log before the mark holds now against what the mark recorded."""
    where = f"the verify mark at position {mark.position}"
    found: list[tuple[str, str]] = []
    if heads_digest(at_mark) != mark.heads:
        reason = "a verified event was rewritten with its stream's hashes, or a stream cut or removed"
        found.append((MARK_STREAM, f"the streams differ from {where}: {reason} (verify --full names it)"))
    if events != mark.events:
        change = "deleted" if events < mark.events else "inserted"
        found.append(
            (MARK_STREAM, f"{events} events up to position {mark.position}, {mark.events} at {where}: {change}")
        )
    if blobs < mark.blobs:
        found.append(("blobs", f"{blobs} blobs, {mark.blobs} at {where}: blobs were deleted"))
    report.problems += [Problem(stream, None, None, reason) for stream, reason in found]


async def _uncovered(
    store: EventStore,
    mark: StoreVerified,
    chain: ChainPass,
    first: dict[str, tuple[int, str]],
    at_mark: dict[str, tuple[int, str]],
    heads: dict[str, tuple[int, str]],
) -> dict[str, int]:
    """Each run stream's events after its last seal: the mark's counts, moved by the new events and seals."""
    uncovered = dict(mark.uncovered)
    runs: dict[str, bool] = dict.fromkeys(chain.runs, True)
    for stream in _changed(first, chain.sealed_to):
        root = tree_root(stream)
        if root not in runs:
            opening = await store.read_event(root, 1)
            runs[root] = opening is not None and opening.type == "run.started"
        if not runs[root] or stream not in heads:
            continue
        before = at_mark.get(stream, (0, ""))[0]
        sealed = max(before - mark.uncovered.get(stream, 0), chain.sealed_to.get(stream, 0))
        uncovered.pop(stream, None)
        if heads[stream][0] > sealed:
            uncovered[stream] = heads[stream][0] - sealed
    return uncovered


def _changed(first: dict[str, tuple[int, str]], sealed_to: dict[str, int]) -> Iterable[str]:
    return sorted(first.keys() | sealed_to.keys())
