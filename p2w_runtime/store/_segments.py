"""Segments: a run of one stream's events written together, stored as one compressed row (docs/design/store.md,
"Segments").

A short event's row is mostly envelope (ids, hashes, names, indexes); compressed one by one it stays so. Compressed
together, the events of an episode take about what an Inspect ``.eval`` log takes for the same content. A segment
stores each event's envelope and its payload text exactly as hashed, plus the ``prev_hash`` of its first event and
the hash of its last one: the hashes in between are recomputed when it is read, so a changed byte anywhere breaks
the last link, which ``verify`` checks like any other.

Written where a whole run of a stream's events arrives in one write (imports, bundle import, ``migrate``), and by
compaction (``_sql_compact.py``): a recorded episode's rows, once it is sealed, become segments whose events keep
the positions they were recorded at, which other streams' events interleave (``SPARSE_CODEC``). An episode being
recorded stays rows, so SQL on it keeps working.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import orjson
import zstandard

from p2w_rt.schemas import StoredEvent
from p2w_runtime.store._dictionaries import DICTIONARY_MARK, compressor, decompressor, dictionary_of, with_dictionary
from p2w_runtime.store._event_store import StoreError

SEGMENT_MIN_EVENTS = 16
"""A write stores a run of at least this many consecutive events of one stream as a segment. A recorded step is
a handful of events and stays rows; an imported episode becomes one segment (docs/design/store.md,
"Segments")."""
SEGMENT_MAX_EVENTS = 512
"""A segment holds at most this many events: a read of any of them decodes the segment whole, so a 200,000-step
episode written in one batch is ~800 segments, and a page of its timeline decodes one or two (docs/design/store.md,
"Segments: long streams")."""
CODEC = "zstd-jsonl"
"""Each event as a JSON array of its envelope fields ending with its payload's length, a newline, the payload text
as hashed and a newline; the whole zstd-compressed (level 3, with a content checksum). Either codec is followed by
``+dict:<sha256>`` when compressed with the store's dictionary (``_dictionaries.py``)."""
SPARSE_CODEC = "zstd-jsonl-at"
"""``CODEC`` with each event's position (as an offset from the segment's first) before its payload's length: the
events of a compacted episode, which kept the positions they were recorded at (``_sql_sparse.py`` reads them in
position order). A compacted segment's codec starts with it, and only a compacted segment's (``COMPACTED_LIKE``)."""
COMPACTED_LIKE = f"{SPARSE_CODEC}%"
COMPACTED_SQL = f"segments.codec LIKE '{COMPACTED_LIKE}'"
"""Which segments are compacted, as the term of the partial index ``COMPACTED_INDEX`` (a query states it as written
for either database to use that index)."""
COMPACTED_INDEX_NAME = "ix_segments_compacted"
COMPACTED_INDEX = (
    f"CREATE INDEX IF NOT EXISTS {COMPACTED_INDEX_NAME} ON segments (first_position) "
    f"WHERE codec LIKE '{COMPACTED_LIKE}'"
)
"""The compacted segments by first position: every read in position order looks for them, page by page, and finds
none in a store of imports at the cost of one index lookup (``_sql_sparse.py``)."""
SPARSE_MAX_SPAN = 65_536
"""A compacted segment spans at most this many positions: a read in position order finds the segments that may hold
a position by a bounded range of ``first_position`` (``_sql_sparse.py``)."""


class CorruptSegment(StoreError):
    """A segment's bytes no longer decode (a changed byte fails zstd's checksum): ``verify`` reports its stream."""

    def __init__(self, stream: str, first_seq: int, last_seq: int, why: str) -> None:
        super().__init__(f"stream {stream} seq {first_seq}-{last_seq}: segment unreadable ({why})")
        self.stream = stream
        self.first_seq = first_seq


def segment_runs(streams: Sequence[str]) -> list[tuple[int, int]]:
    """The ``[start, end)`` index ranges of a write's events to store as segments: runs of at least
    ``SEGMENT_MIN_EVENTS`` consecutive events of one stream, cut every ``SEGMENT_MAX_EVENTS``.

    The write's first event is always a row: an optimistic writer (PostgreSQL) learns that another appended after
    its last look by colliding with the row at the next position, so that position must be a row's.
    """
    runs = []
    i, n = 1, len(streams)
    while i < n:
        j = i + 1
        while j < n and streams[j] == streams[i]:
            j += 1
        if j - i >= SEGMENT_MIN_EVENTS:
            cuts = range(i, j, SEGMENT_MAX_EVENTS)
            runs += [(start, min(start + SEGMENT_MAX_EVENTS, j)) for start in cuts if j - start >= SEGMENT_MIN_EVENTS]
        i = j
    return runs


def compaction_cuts(events: Sequence[StoredEvent]) -> list[tuple[int, int]]:
    """The ``[start, end)`` index ranges of a stream's event rows (in seq order) to compact into one segment each:
    consecutive seqs (an import's segment may sit between rows), at most ``SEGMENT_MAX_EVENTS`` events, spanning
    fewer than ``SPARSE_MAX_SPAN`` positions; a range of fewer than ``SEGMENT_MIN_EVENTS`` stays rows."""
    cuts, start = [], 0
    for i in range(1, len(events) + 1):
        if (
            i == len(events)
            or events[i].seq != events[i - 1].seq + 1
            or i - start == SEGMENT_MAX_EVENTS
            or (events[i].position or 0) - (events[start].position or 0) >= SPARSE_MAX_SPAN
        ):
            if i - start >= SEGMENT_MIN_EVENTS:
                cuts.append((start, i))
            start = i
    return cuts


def by_stream(events: Sequence[StoredEvent]) -> list[StoredEvent]:
    """An import's events with the events of each stream that has at least ``SEGMENT_MIN_EVENTS`` of them gathered at
    its first event's place, everything else in its order.

    A recording interleaves the episodes it runs at once, step by step, and only a stream's events written together
    make a segment. Positions are the store's own (a bundle carries none); what readers rely on is kept: each
    stream's order, the order streams start in, and the order of every event of the smaller streams.
    """
    counts = Counter(event.stream for event in events)
    whole = {stream for stream, count in counts.items() if count >= SEGMENT_MIN_EVENTS}
    if not whole:
        return list(events)
    gathered: dict[str, list[StoredEvent]] = {}
    ordered: list[StoredEvent | list[StoredEvent]] = []
    for event in events:
        if event.stream not in whole:
            ordered.append(event)
        elif event.stream in gathered:
            gathered[event.stream].append(event)
        else:
            ordered.append(gathered.setdefault(event.stream, [event]))
    return [e for item in ordered for e in (item if isinstance(item, list) else (item,))]


def _text(events: Sequence[StoredEvent], start: int | None) -> bytes:
    """The codec's uncompressed text of ``events``; with each one's position as an offset from ``start`` if given."""
    parts: list[bytes] = []
    for e in events:
        payload = e.payload_json.encode()
        head = [e.event_id, e.type, e.schema_version, e.recorded_at, e.causation_id, e.blobs, len(payload)]
        if start is not None:
            head.insert(6, (e.position or 0) - start)
        parts += (orjson.dumps(head), b"\n", payload, b"\n")
    return b"".join(parts)


def segment_text(events: Sequence[StoredEvent]) -> bytes:
    """``CODEC``'s uncompressed text of ``events``."""
    return _text(events, None)


def segment_row(events: Sequence[StoredEvent], first_position: int, dictionary: str | None) -> tuple[Any, ...]:
    """The values of a segments row holding ``events`` (one stream's, consecutive, written at ``first_position``
    onwards), in the table's column order, compressed with the loaded ``dictionary`` (its hash; None: none)."""
    first, last = events[0], events[-1]
    return (
        first_position, first_position + len(events) - 1, first.stream, first.seq, last.seq, first.prev_hash,
        last.hash, last.type, with_dictionary(CODEC, dictionary), compressor(dictionary).compress(_text(events, None)),
    )  # fmt: skip


def compacted_row(events: Sequence[StoredEvent], dictionary: str | None) -> tuple[Any, ...]:
    """The values of a segments row holding ``events`` (one stream's, consecutive, stored) at the positions they
    hold, compressed with the loaded ``dictionary`` (its hash; None: none)."""
    first, last = events[0], events[-1]
    start, codec = first.position or 0, with_dictionary(SPARSE_CODEC, dictionary)
    return (
        start, last.position, first.stream, first.seq, last.seq, first.prev_hash, last.hash, last.type, codec,
        compressor(dictionary).compress(_text(events, start)),
    )  # fmt: skip


def plain_text(codec: str, data: bytes) -> bytes | None:
    """The uncompressed text of a segment compressed without a dictionary (what one is trained on), else None (also
    when it no longer decodes: ``verify`` names it)."""
    if codec not in (CODEC, SPARSE_CODEC):
        return None
    try:
        return decompressor(None).decompress(data)
    except zstandard.ZstdError:
        return None


def segment_events(
    stream: str, first_seq: int, last_seq: int, first_position: int, prev_hash: str, head_hash: str, codec: str,
    data: bytes,
) -> list[StoredEvent]:  # fmt: skip
    """The stored events of a segment, each hash recomputed from its content but the last, which is ``head_hash``.

    A dictionary the codec names must be loaded (``_dictionaries.py``)."""
    base, sha = codec.partition(DICTIONARY_MARK)[0], dictionary_of(codec)
    if base not in (CODEC, SPARSE_CODEC):
        raise CorruptSegment(stream, first_seq, last_seq, f"unknown codec {codec!r}")
    sparse = base == SPARSE_CODEC
    try:
        text = decompressor(sha).decompress(data)
        events = []
        at, seq, position = 0, first_seq, first_position
        while at < len(text):
            newline = text.index(b"\n", at)
            head = orjson.loads(text[at:newline])
            if sparse:
                event_id, type_, version, recorded_at, causation_id, blobs, offset, size = head
                position = first_position + offset
            else:
                event_id, type_, version, recorded_at, causation_id, blobs, size = head
            at = newline + 2 + size
            payload = text[newline + 1 : at - 1].decode()
            event = StoredEvent(
                event_id,
                stream,
                seq,
                position,
                type_,
                version,
                recorded_at,
                causation_id,
                payload,
                blobs,
                prev_hash,
                "",
            )
            prev_hash = event.hash = event.compute_hash()
            event.hash_derived = True
            events.append(event)
            seq += 1
            position += 1  # a sparse segment's next event says its own
    except KeyError as exc:
        raise CorruptSegment(stream, first_seq, last_seq, f"its dictionary {sha} is missing") from exc
    except (zstandard.ZstdError, ValueError, TypeError) as exc:
        raise CorruptSegment(stream, first_seq, last_seq, str(exc)) from exc
    if seq != last_seq + 1:
        raise CorruptSegment(stream, first_seq, last_seq, f"holds {seq - first_seq} events")
    events[-1].hash, events[-1].hash_derived = head_hash, False  # the stored hash, which its content must match
    return events
