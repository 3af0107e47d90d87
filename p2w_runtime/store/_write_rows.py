"""How the events of a SQL write become rows: sealed (redacted) as the insert consumes them, and the runs of events
that go into segments cut out of them (``_segments.py``)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from p2w_rt.schemas import NewEvent, StoredEvent
from p2w_runtime.redaction import seal_redacted
from p2w_runtime.store._limits import check_event_size
from p2w_runtime.store._log_end import Heads
from p2w_runtime.store._rows import event_to_row
from p2w_runtime.store._segments import segment_row, segment_text
from p2w_runtime.store._sql_base import Session


def sealed_rows(
    events: Sequence[NewEvent], position: int, heads: Heads[Session], sealed: list[StoredEvent]
) -> Iterator[tuple[Any, ...]]:
    """Seal each event (redacted) when the insert asks for its row, collecting the sealed events in ``sealed``.

    A COPY consumes rows as it sends them, so the server inserts the first rows while the next are sealed.
    """
    for new in events:
        seq, prev = heads.known(new.stream)
        position += 1
        stored = seal_redacted(new, seq=seq + 1, prev_hash=prev, position=position)
        check_event_size(stored)
        heads.advance(stored)
        sealed.append(stored)
        yield event_to_row(stored, position)


def split_segments(
    events: Sequence[StoredEvent], rows: list[tuple[Any, ...]], runs: list[tuple[int, int]], dictionary: str | None
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The events rows of a write's events outside ``runs``, and a segments row for each run compressed with
    ``dictionary`` (``rows[i]`` is the events row of ``events[i]``; its first value is the position)."""
    if not runs:
        return rows, []
    kept, segments, at = [], [], 0
    for start, end in runs:
        kept += rows[at:start]
        segments.append(segment_row(events[start:end], rows[start][0], dictionary))
        at = end
    return kept + rows[at:], segments


def segment_texts(events: Sequence[StoredEvent], runs: list[tuple[int, int]]) -> Iterator[bytes]:
    """The uncompressed text of each segment ``runs`` cuts from ``events`` (what a dictionary may be trained on)."""
    return (segment_text(events[start:end]) for start, end in runs)


def events_in(segments: list[tuple[Any, ...]]) -> int:
    return sum(row[1] - row[0] + 1 for row in segments)  # last_position - first_position + 1
