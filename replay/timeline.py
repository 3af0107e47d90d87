"""A readable timeline of an episode: one line per event with its gist, read from the episode's trajectory."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from p2w_runtime.domain.trajectory import (
    ActionRecord,
    CaptureRecord,
    EpisodeChunks,
    EpisodeRecord,
    FinalStateRecord,
    FinishedRecord,
    HistoryAccess,
    LlmCallRecord,
    ObservationRecord,
    RationaleRecord,
    RetrievalRecord,
    Trajectory,
)

GIST_WIDTH = 160


@dataclass(frozen=True, slots=True)
class TimelineRow:
    seq: int
    step: int | None
    type: str
    gist: str
    event_id: str


def _clip(text: str | None, width: int = GIST_WIDTH) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def gist(record: EpisodeRecord) -> str:
    """The one thing a reader wants to know about an event."""
    match record:
        case FinishedRecord():
            answer = f" answer: {_clip(record.answer, 100)}" if record.answer else ""
            return f"{record.end_reason} after {record.steps} step{'' if record.steps == 1 else 's'}{answer}"
        case ObservationRecord():
            return _clip(f"{record.url} {record.title}")
        case HistoryAccess():
            return _clip(f"[{record.phase}] {record.query}" + (f"  (why: {record.reason})" if record.reason else ""))
        case RetrievalRecord():
            top = record.hits[0].entry.key_text() if record.hits else "no hit"
            return _clip(f"{len(record.hits)} hits (k={record.k}, ≥{record.threshold}); top: {top}")
        case RationaleRecord():
            cites = f" cites {list(record.cited_entry_ids)}" if record.cited_entry_ids else ""
            return _clip(f"{record.source}: {record.text}{cites}")
        case LlmCallRecord():
            tokens = record.usage.total_tokens if record.usage else "?"
            status = f"error: {record.error}" if record.error else f"{tokens} tokens"
            return _clip(f"{record.role} {record.model} #{record.ordinal} attempt {record.attempt}, {status}")
        case ActionRecord():
            rendered = record.parsed.render() if record.parsed else record.raw
            error = f" ({record.error})" if record.error else ""
            return _clip(f"{record.status}: {rendered}{error}")
        case FinalStateRecord():
            return _clip(f"{record.url} {record.title}")
        case CaptureRecord():
            got = record.error or f"HTTP {record.status} {record.final_url or ''} {record.title}"
            return _clip(f"link #{record.index} {record.requested_url}: {got}")


def timeline(t: Trajectory) -> list[TimelineRow]:
    """Every event of the episode, ``episode.started`` first (seq 1), each after it from ``t.records``."""
    return [started_row(t), *(row(seq, record) for seq, record in enumerate(t.records, start=2))]


def started_row(t: Trajectory) -> TimelineRow:
    """The timeline's first line, ``episode.started``: the task, its level and its query."""
    return TimelineRow(
        1, None, "episode.started", f"{t.task_id} (level {t.level}) {_clip(t.query, 120)}", t.started_event_id
    )


def row(seq: int, record: EpisodeRecord) -> TimelineRow:
    """The timeline line of the event at ``seq``."""
    return TimelineRow(seq, getattr(record, "step", None), record.EVENT_TYPE, gist(record), record.event_id)


async def timeline_rows(
    episode: EpisodeChunks, *, after_seq: int = 0, until_seq: int | None = None
) -> AsyncIterator[TimelineRow]:
    """The timeline of the events ``after_seq < seq <= until_seq``, a chunk of the store at a time (bounded
    memory, whatever the episode's length): the same lines ``timeline`` gives for those seqs."""
    if after_seq < 1 and (until_seq is None or until_seq >= 1):
        yield started_row(episode.header)
    async for seq, record in episode.records(after_seq, until_seq):
        yield row(seq, record)
