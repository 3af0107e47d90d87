"""Recompute every hash chain and blob hash and check every seal: the proof that nothing was changed or
removed after recording, and, per run, how much a deletion could still remove unseen (the events after the last
seal of each stream)."""

from __future__ import annotations

from dataclasses import dataclass, field

import zstandard

from p2w_rt.schemas import GENESIS_HASH, StoredEvent, StoreVerified, StreamSeal, blob_hash
from p2w_runtime.errors import clip
from p2w_runtime.store._chain import MODIFIED, chain_link
from p2w_runtime.store._event_store import EventStore
from p2w_runtime.store._seal import SEAL_EVENT_TYPES, StreamEnds, seal_problem
from p2w_runtime.store._segments import CorruptSegment
from p2w_runtime.store._tree import read_tree, tree_root

NOTED_TYPES = frozenset(("run.started", *SEAL_EVENT_TYPES))
"""The types ``ChainPass`` notes beyond the chain: a run's start, and the events that carry seals."""
NOTE, LINK, CONTENT, AFTER_END = range(4)
"""The steps of ``ChainPass.check`` in the order it takes them, which is the order of an event's problems."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One broken link: where it is and what is wrong."""

    stream: str
    seq: int | None
    event_id: str | None
    reason: str

    def __str__(self) -> str:
        where = f"stream {clip(self.stream)}" + (f" seq {self.seq}" if self.seq is not None else "")
        return f"{where}" + (f" event {clip(self.event_id)}" if self.event_id else "") + f": {clip(self.reason, 300)}"


@dataclass(frozen=True, slots=True)
class UnsealedTail:
    """A run's events that no seal covers yet, per stream: its newest ones, which a deletion could remove unseen.

    A stream is covered up to the most events any seal commits it to, or up to its own last sealing event (whose
    ``prev_hash`` commits to what precedes it). A finished run has none; a run in flight, the episodes being
    recorded (and ``run.started`` until the first episode is sealed); a run from before seals, every event.
    """

    run_id: str
    streams: dict[str, int]
    """Stream -> how many of its last events follow its last seal (streams with none left out)."""

    @property
    def events(self) -> int:
        return sum(self.streams.values())


@dataclass
class VerifyReport:
    streams: int = 0
    events: int = 0
    blobs: int = 0
    seals: int = 0
    """Stream seals checked (one per stream per sealing event)."""
    unsealed: list[str] = field(default_factory=list)
    """Runs no seal covers (recorded before seals existed, or still running): deletions there stay invisible."""
    tails: list[UnsealedTail] = field(default_factory=list)
    """Every run checked, with the events after its streams' last seals."""
    problems: list[Problem] = field(default_factory=list)
    incremental: bool = False
    """Only the events after ``since`` were checked (and what precedes them by its streams' heads and counts)."""
    since: int = 0
    """The log position the check started after (0: the whole log)."""
    through: int | None = None
    """The log position a whole-store check went through (None: one run's check)."""
    marks: int = 0
    """Earlier verify marks an incremental check read with the new events (not counted in ``events``)."""
    full_because: str | None = None
    """Why a whole-store check was not incremental (no earlier mark, ``--full``, ...)."""
    mark: StoreVerified | None = None
    """What this check found, to append as the store's next verify mark once nothing else failed."""
    collected: list[StoredEvent] | None = None
    """The events of the types a whole-store check was asked to collect, in log order through ``through``; None
    when no pass read the whole log (an incremental check, or one a segment that no longer decodes cut short)."""

    @property
    def ok(self) -> bool:
        return not self.problems


class ChainPass:
    """One pass over events in position order, each checked against its stream's head: chain, hash, payload, the
    end of its stream; it keeps one head per stream, the seals met, the blobs referenced, and the events of the
    ``collect`` types (what the caller folds next, so that it need not read the log again), not the events.

    ``check`` runs once per event of the log, so the common case (linked, unchanged, nothing special about its type)
    takes one set lookup of the type and no objects beyond the head; a broken link is described by ``chain_link``
    as any other reader describes it. Each problem's place in the log is kept beside it (``places``), so that
    passes over parts of the log can be put together in the order one pass finds them."""

    def __init__(
        self,
        report: VerifyReport,
        heads: dict[str, tuple[int, str]] | None = None,
        collect: frozenset[str] = frozenset(),
    ) -> None:
        self.report = report
        self.heads: dict[str, tuple[int, str]] = {} if heads is None else heads
        self.referenced: set[str] = set()
        self.runs: set[str] = set()
        self.seals: list[tuple[StoredEvent, list[StreamSeal]]] = []
        self.sealed_to: dict[str, int] = {}
        """Stream -> how many of its events the seals seen so far cover."""
        self.ends = StreamEnds()
        self.collect = collect
        self.collected: list[StoredEvent] = []
        self.places: list[tuple[int, int]] = []
        """(position, step) of each problem the pass found: the event's, and which step of ``check`` found it."""
        self._noted = collect | NOTED_TYPES

    def check(self, event: StoredEvent) -> None:
        stream, type_ = event.stream, event.type
        if type(event.seq) is not int:  # a seq column edited to text: no head can follow from it
            self.found(event, LINK, f"seq {clip(repr(event.seq))} is not a number")
            return
        if type_ in self._noted:
            self._note(event)
        head = self.heads.get(stream)
        prev_seq, prev_hash = (0, GENESIS_HASH) if head is None else head
        modified = not event.hash_matches()
        if modified or event.seq != prev_seq + 1 or event.prev_hash != prev_hash:
            self._broken(event, prev_seq, prev_hash)
        elif (invalid := event.payload_problem()) is not None:
            self.found(event, CONTENT, invalid)
        if (after_end := self.ends.problem(event)) is not None:
            self.found(event, AFTER_END, after_end)
        self.heads[stream] = (event.seq, event.hash)
        if event.blobs:
            self.referenced.update(event.blobs)

    def found(self, event: StoredEvent, step: int, reason: str) -> None:
        self.report.problems.append(Problem(event.stream, event.seq, event.event_id, reason))
        self.places.append((event.position or 0, step))

    def _note(self, event: StoredEvent) -> None:
        """A run's start, a seal, or an event of a type the caller collects."""
        if event.type in self.collect:
            self.collected.append(event)
        if event.type == "run.started" and tree_root(event.stream) == event.stream:
            self.runs.add(event.stream)
        elif event.type in SEAL_EVENT_TYPES:
            try:
                entries = getattr(event.decode().payload, "seals", None)
            except ValueError as exc:
                self.found(event, NOTE, f"{event.type} unreadable, its seal unchecked ({exc})"[:300])
                return
            if entries is not None:  # a run.finished from before seals carries none
                self.seals.append((event, entries))
                self.sealed_to[event.stream] = max(self.sealed_to.get(event.stream, 0), event.seq)
                for entry in entries:
                    self.sealed_to[entry.stream] = max(self.sealed_to.get(entry.stream, 0), entry.events)

    def _broken(self, event: StoredEvent, prev_seq: int, prev_hash: str) -> None:
        """What is wrong with an event that does not link to its head or match its hash; its payload is checked
        only when its content is its hash's."""
        link = chain_link(prev_seq, prev_hash, event)
        if link.unlinked is not None:
            self.found(event, LINK, link.unlinked)
        if link.modified:
            self.found(event, CONTENT, MODIFIED)
        elif (invalid := event.payload_problem()) is not None:
            self.found(event, CONTENT, invalid)

    def sealed_runs(self) -> set[str]:
        return {tree_root(sealing.stream) for sealing, _ in self.seals}

    async def check_seals(self, store: EventStore, heads: dict[str, tuple[int, str]]) -> None:
        """Check every seal met against the streams' ``heads`` as the pass ended."""
        for sealing, entries in self.seals:
            for entry in entries:
                self.report.seals += 1
                problem = await _check_seal(store, heads, sealing, entry)
                if problem is not None:
                    self.report.problems.append(problem)


async def verify_store(store: EventStore, root: str | None = None, *, through: int | None = None) -> VerifyReport:
    """Check chains (seq gap-free from 1, prev_hash links, recomputed hashes), payloads, seals and blobs.

    With ``root`` (a run id), only that stream, the streams under it and the blobs they reference are checked;
    with ``through``, only the events up to that log position (what a verify mark then vouches for).
    One pass in position order; memory holds one head per stream and the seals, not the events.
    """
    return (await full_pass(store, root, through))[0]


async def full_pass(
    store: EventStore, root: str | None, through: int | None, collect: frozenset[str] = frozenset()
) -> tuple[VerifyReport, ChainPass]:
    """``verify_store``, with the pass's state: its heads are what a verify mark commits to; the events of the
    ``collect`` types in ``report.collected`` when it read every one."""
    report = VerifyReport(through=through)
    chain = ChainPass(report, collect=collect)
    events = store.read_all() if root is None else read_tree(store, root)
    try:
        async for event in events:
            if through is not None and (event.position or 0) > through:
                break
            report.events += 1
            chain.check(event)
    except CorruptSegment as exc:  # nothing after it can be read in order: the report ends here
        report.problems.append(Problem(exc.stream, exc.first_seq, None, str(exc)))
        return report, chain
    finally:
        await events.aclose()  # type: ignore[attr-defined]  # an async generator behind EventStore's AsyncIterator
    await finish_pass(store, chain, root)
    if collect:
        report.collected = chain.collected
    return report, chain


async def finish_pass(store: EventStore, chain: ChainPass, root: str | None) -> None:
    """After a pass over every event: the seals against the heads it ended with, the unsealed tails, the blobs."""
    report = chain.report
    report.streams = len(chain.heads)
    await chain.check_seals(store, chain.heads)
    report.unsealed = sorted(chain.runs - chain.sealed_runs())
    report.tails = tails_of(chain.runs, chain.heads, chain.sealed_to)
    hashes = sorted(chain.referenced) if root else [h async for h in store.blob_hashes()]
    await check_blobs(store, report, hashes)
    if root is None:
        for sha in sorted(chain.referenced - set(hashes)):
            report.problems.append(Problem("blobs", None, None, f"blob {sha} is referenced but missing"))


async def check_blobs(store: EventStore, report: VerifyReport, hashes: list[str]) -> None:
    """Each blob of ``hashes`` must be there, decompress, and hash to its name."""
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


def tails_of(runs: set[str], heads: dict[str, tuple[int, str]], sealed_to: dict[str, int]) -> list[UnsealedTail]:
    tails = {run: UnsealedTail(run, {}) for run in sorted(runs)}
    for stream, (last_seq, _) in heads.items():
        tail = tails.get(tree_root(stream))
        if tail is not None and last_seq > sealed_to.get(stream, 0):
            tail.streams[stream] = last_seq - sealed_to.get(stream, 0)
    return list(tails.values())


async def _check_seal(
    store: EventStore, heads: dict[str, tuple[int, str]], sealing: StoredEvent, seal: StreamSeal
) -> Problem | None:
    """A sealed stream must still hold at least the sealed number of events, the last sealed one unchanged."""
    head = heads.get(seal.stream)
    sealed_hash = None
    if head is not None and head[0] >= seal.events:
        sealed_hash = head[1] if head[0] == seal.events else await _hash_at(store, seal.stream, seal.events)
    reason = seal_problem(seal, head, sealed_hash, f"sealed by {sealing.type} ({sealing.stream} seq {sealing.seq})")
    return None if reason is None else Problem(seal.stream, head[0] if head else None, None, reason)


async def _hash_at(store: EventStore, stream: str, seq: int) -> str | None:
    """The hash of event ``seq`` of ``stream`` (the stream grew after the seal), None if it is not there."""
    events = store.read_stream(stream, after_seq=seq - 1)
    try:
        async for event in events:
            return event.hash if event.seq == seq else None
        return None
    finally:
        await events.aclose()  # type: ignore[attr-defined]  # an async generator behind EventStore's AsyncIterator
