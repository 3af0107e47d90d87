"""What a ``detailed`` read keeps beside the records (``_Fold``): when an event was recorded, an LLM call's request
and latency, a retrieval's entries as recorded. Exports read them (OpenTelemetry spans); judges never do."""

from __future__ import annotations

from typing import Any

import msgspec

from p2w_rt.schemas import Event, HistoryRetrieval, LlmCall, StoredEvent, format_timestamp
from p2w_runtime.domain.trajectory._envelope import Envelope, StoredEnvelope
from p2w_runtime.domain.trajectory._records import LlmCallDetail
from p2w_runtime.store import StoreError

_DETAIL = msgspec.json.Decoder(LlmCallDetail)


def recorded_at(event: Envelope) -> str:
    if isinstance(event, StoredEvent):
        return event.recorded_at
    if isinstance(event, Event):
        return format_timestamp(event.recorded_at)
    raise StoreError(f"stream {event.stream} seq {event.seq}: read without its time; a detailed read needs it")


def call_detail(event: StoredEnvelope) -> LlmCallDetail:
    """The call's request and latency from its stored text (its record came from the text: the payload is current)."""
    try:
        return _DETAIL.decode(event.payload_json)
    except msgspec.MsgspecError:
        p = event.decode_payload()
        assert isinstance(p, LlmCall)
        return LlmCallDetail(p.messages, p.latency_s, p.params)


def retrieved_entries(p: HistoryRetrieval) -> list[dict[str, Any]]:
    return [hit.entry.model_dump(mode="json") for hit in p.hits]
