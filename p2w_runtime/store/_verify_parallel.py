"""The whole store's full check spread over processes: the log cut into position ranges, each range checked by a
worker of its own (its own read-only connection), the ranges then stitched in order (docs/design/integrity.md,
"Speed").

Hashing and payload validation hold the GIL (an event's few hundred bytes are below what hashlib hashes without it),
so threads would not help; processes do. Each worker checks its range as one pass does, except that a stream's first
event in the range is taken as it comes (its seq and ``prev_hash`` kept): the stitch checks it against the stream's
head as the ranges before left it, and whether the stream had ended there. What a worker cannot know alone (seals
against the final heads, blobs, unsealed tails) is left to the caller, with the collected seals.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from p2w_rt.schemas import GENESIS_HASH, StoredEvent, StreamSeal
from p2w_runtime import event_loop
from p2w_runtime.store._event_store import EventStore
from p2w_runtime.store._seal import STREAM_END_TYPES, after_end_problem
from p2w_runtime.store._segments import CorruptSegment
from p2w_runtime.store._verify import AFTER_END, LINK, ChainPass, Problem, VerifyReport

PARALLEL_MIN_EVENTS = 200_000
"""Below this many positions a worker's start-up (an interpreter and the store's modules) outweighs what it saves."""
CUT = AFTER_END + 1
"""The place of a range's unreadable segment: after every problem of the events read before it."""
RANGES_PER_WORKER = 2
"""Each worker takes a few ranges, so one that lands on a slower part of the log does not hold the others up."""


@dataclass
class RangeResult:
    """What one range's pass found, and what the stitch needs: each stream's first event and last head there."""

    events: int = 0
    problems: list[Problem] = field(default_factory=list)
    places: list[tuple[int, int]] = field(default_factory=list)
    """Where each problem sits in log order (``ChainPass.places``)."""
    first: dict[str, tuple[int, str, str, int]] = field(default_factory=dict)
    """Stream -> (seq, prev_hash, event id, position) of its first event in the range."""
    heads: dict[str, tuple[int, str]] = field(default_factory=dict)
    ended: dict[str, tuple[str, int]] = field(default_factory=dict)
    """Streams the range ended: (the ending event's type, its seq)."""
    runs: set[str] = field(default_factory=set)
    seals: list[tuple[StoredEvent, list[StreamSeal]]] = field(default_factory=list)
    sealed_to: dict[str, int] = field(default_factory=dict)
    referenced: set[str] = field(default_factory=set)
    collected: list[StoredEvent] = field(default_factory=list)
    """The range's events of the types the caller collects, in log order."""
    corrupt: bool = False
    """A segment no longer decodes: nothing after it in the range was read."""


def reopen_location(store: EventStore) -> str | Path | None:
    """Where a worker opens the same store (a SQLite file, a PostgreSQL URL), or None (memory: one process)."""
    path = getattr(store, "_path", None)
    if isinstance(path, Path):
        return path
    connects = getattr(store, "connects", None)  # a PostgreSQL store: the URL as given, options and all
    return None if connects is None else str(connects.url)


def workers(end: int) -> int:
    """How many processes to check a log ending at ``end`` with (1: in this one)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return 1 if end < PARALLEL_MIN_EVENTS else max(1, cores)


def ranges(end: int, count: int) -> list[tuple[int, int]]:
    """``count`` ranges (after, through] of about equal size covering positions 1..``end``."""
    cuts = [end * i // count for i in range(count + 1)]
    return [(cuts[i], cuts[i + 1]) for i in range(count) if cuts[i + 1] > cuts[i]]


def check_range(location: str | Path, after: int, through: int, collect: frozenset[str]) -> RangeResult:
    """A worker's part: positions (``after``, ``through``] of the store at ``location``, opened read-only."""
    return event_loop.run(_check_range(location, after, through, collect))


async def _check_range(location: str | Path, after: int, through: int, collect: frozenset[str]) -> RangeResult:
    from p2w_runtime.store import open_store

    async with open_store(location, create=False, read_only=True) as store:
        return await pass_range(store, after, through, collect)


async def pass_range(store: EventStore, after: int, through: int, collect: frozenset[str] = frozenset()) -> RangeResult:
    result = RangeResult()
    chain = ChainPass(VerifyReport(), collect=collect)
    events = store.read_all(after_position=after)
    try:
        async for event in events:
            if (event.position or 0) > through:
                break
            result.events += 1
            if event.stream not in chain.heads and type(event.seq) is int:  # else ``check`` names the seq
                result.first[event.stream] = (event.seq, event.prev_hash, event.event_id, event.position or 0)
                if after > 0:  # continues a range before: taken as it comes, the stitch links it
                    chain.heads[event.stream] = (event.seq - 1, event.prev_hash)
            if event.type in STREAM_END_TYPES and event.stream not in result.ended:
                result.ended[event.stream] = (event.type, event.seq)
            chain.check(event)
    except CorruptSegment as exc:
        chain.report.problems.append(Problem(exc.stream, exc.first_seq, None, str(exc)))
        chain.places.append((through, CUT))
        result.corrupt = True
    finally:
        await events.aclose()  # type: ignore[attr-defined]  # an async generator behind EventStore's AsyncIterator
    result.problems, result.places = chain.report.problems, chain.places
    result.heads, result.runs = chain.heads, chain.runs
    result.seals, result.sealed_to, result.referenced = list(chain.seals), chain.sealed_to, chain.referenced
    result.collected = chain.collected
    return result


def stitch(
    chain: ChainPass,
    ended: dict[str, tuple[str, int]],
    late: dict[str, tuple[str, int]],
    result: RangeResult,
    *,
    first_range: bool,
) -> None:
    """Add one range's result, in log order, to ``chain`` (the ranges before it, whose streams ``ended`` as noted):
    link each stream's first event there to its head so far; note in ``late`` a stream with events after its end."""
    report = chain.report
    linked = {} if first_range else result.first  # the first range began at every stream's genesis: its pass linked
    for stream, (seq, prev_hash, event_id, position) in linked.items():
        head_seq, head_hash = chain.heads.get(stream, (0, GENESIS_HASH))
        unlinked = None
        if seq != head_seq + 1:
            unlinked = f"seq {seq} follows {head_seq}: gap or reorder"
        elif prev_hash != head_hash:
            unlinked = "prev_hash does not match the previous event's hash"
        if unlinked is not None:
            report.problems.append(Problem(stream, seq, event_id, unlinked))
            chain.places.append((position, LINK))
        if stream in ended:
            late.setdefault(stream, ended[stream])
    report.problems += result.problems
    chain.places += result.places
    report.events += result.events
    chain.heads.update(result.heads)
    for stream, end in result.ended.items():
        ended.setdefault(stream, end)
    chain.runs |= result.runs
    chain.seals += result.seals
    for stream, count in result.sealed_to.items():
        chain.sealed_to[stream] = max(chain.sealed_to.get(stream, 0), count)
    chain.referenced |= result.referenced
    chain.collected += result.collected


async def parallel_pass(
    store: EventStore, report: VerifyReport, end: int, collect: frozenset[str] = frozenset()
) -> tuple[ChainPass, bool] | None:
    """Positions 1..``end`` checked by worker processes and stitched into one pass's state (the events of the
    ``collect`` types in log order among it), with whether a segment no longer decodes (the pass then ends there);
    None when this store is checked in this process (small, in memory, or one core)."""
    location = reopen_location(store)
    count = workers(end)
    if location is None or count < 2:
        return None
    chain = ChainPass(report, collect=collect)
    ended: dict[str, tuple[str, int]] = {}
    late: dict[str, tuple[str, int]] = {}
    parts = ranges(end, count * RANGES_PER_WORKER)
    loop = asyncio.get_running_loop()
    with ProcessPoolExecutor(count, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [
            loop.run_in_executor(pool, check_range, location, after, through, collect) for after, through in parts
        ]
        results = await asyncio.gather(*futures)
    corrupt = False
    for i, result in enumerate(results):
        stitch(chain, ended, late, result, first_range=i == 0)
        if result.corrupt:  # nothing after an unreadable segment can be read in order: the report ends there
            corrupt = True
            break
    if not corrupt:
        await _after_ends(store, chain, late, end)
    in_order = sorted(range(len(report.problems)), key=chain.places.__getitem__)  # stable: a range's own order kept
    report.problems = [report.problems[i] for i in in_order]
    chain.places = [chain.places[i] for i in in_order]
    return chain, corrupt


async def _after_ends(store: EventStore, chain: ChainPass, late: dict[str, tuple[str, int]], end: int) -> None:
    """Every event that follows its stream's end in a range after the end's (a tampered store only): named as one
    pass names them, in place of what a range that did not see the end said of them."""
    report = chain.report
    for stream, (end_type, end_seq) in late.items():
        kept = [
            (problem, place)
            for problem, place in zip(report.problems, chain.places, strict=True)
            if not (problem.stream == stream and _after_an_end(problem.reason))
        ]
        report.problems, chain.places = [p for p, _ in kept], [place for _, place in kept]
        events = store.read_stream(stream, after_seq=end_seq)
        try:
            async for event in events:
                if (event.position or 0) <= end:
                    chain.found(event, AFTER_END, f"{event.type} {after_end_problem(end_type, end_seq)}")
        finally:
            await events.aclose()  # type: ignore[attr-defined]  # an async generator behind EventStore's AsyncIterator


def _after_an_end(reason: str) -> bool:
    return reason.endswith(after_end_problem("", 0).partition(":")[2])
