"""A readable timeline of an episode: one line per event with its gist."""

from __future__ import annotations

from dataclasses import dataclass

from schemas import (
    Action,
    EpisodeFinished,
    EpisodeStarted,
    ErrorClassified,
    Event,
    FinalState,
    HistoryQuery,
    HistoryRetrieval,
    Judgment,
    LlmCall,
    Observation,
    PageCapture,
    Payload,
    Rationale,
    RunFinished,
    RunStarted,
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


def gist(payload: Payload) -> str:
    """The one thing a reader wants to know about an event."""
    match payload:
        case RunStarted():
            return f"{payload.label}: {payload.agent} / {payload.backbone_model} / {payload.scheme or '-'}"
        case RunFinished():
            return f"{payload.status}, {payload.episodes} episodes"
        case EpisodeStarted():
            return f"{payload.task_id} (level {payload.level}) {_clip(payload.query, 120)}"
        case EpisodeFinished():
            answer = f" answer: {_clip(payload.answer, 100)}" if payload.answer else ""
            return f"{payload.end_reason} after {payload.steps} steps{answer}"
        case Observation():
            return _clip(f"{payload.url} {payload.title}")
        case HistoryQuery():
            return _clip(
                f"[{payload.phase}] {payload.query}" + (f"  (why: {payload.reason})" if payload.reason else "")
            )
        case HistoryRetrieval():
            top = payload.hits[0].entry.key_text() if payload.hits else "no hit"
            return _clip(f"{len(payload.hits)} hits (k={payload.k}, ≥{payload.threshold}); top: {top}")
        case Rationale():
            cites = f" cites {payload.cited_entry_ids}" if payload.cited_entry_ids else ""
            return _clip(f"{payload.source}: {payload.text}{cites}")
        case LlmCall():
            tokens = payload.usage.total_tokens if payload.usage else "?"
            status = f"error: {payload.error}" if payload.error else f"{tokens} tokens"
            return _clip(f"{payload.role} {payload.model} #{payload.ordinal} attempt {payload.attempt}, {status}")
        case Action():
            rendered = payload.parsed.render() if payload.parsed else payload.raw
            error = f" ({payload.error})" if payload.error else ""
            return _clip(f"{payload.status}: {rendered}{error}")
        case FinalState():
            return _clip(f"{payload.url} {payload.title}")
        case PageCapture():
            got = payload.error or f"HTTP {payload.status} {payload.final_url or ''} {payload.title}"
            return _clip(f"link #{payload.index} {payload.requested_url}: {got}")
        case Judgment():
            metrics = " ".join(f"{k}={v:g}" for k, v in payload.metrics.items())
            return _clip(f"{payload.judge_id} {payload.judge_version} {payload.task_id}: {payload.status} {metrics}")
        case ErrorClassified():
            labels = ", ".join(label.label for label in payload.labels) or "no errors"
            return _clip(f"{payload.classifier_id} {payload.task_id}: {labels}")
    return payload.type


def timeline(events: list[Event]) -> list[TimelineRow]:
    return [TimelineRow(e.seq, getattr(e.payload, "step", None), e.type, gist(e.payload), e.event_id) for e in events]
