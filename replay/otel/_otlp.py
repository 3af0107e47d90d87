"""OTLP JSON's building blocks: ids, attribute values, spans; and what is read back from a ``TracesData`` (its
protobuf encoding, its evaluations as Phoenix annotations, its span count)."""

from __future__ import annotations

import base64
import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

SCOPE = "p2w-rt"
OI_KIND = "openinference.span.kind"
"""OpenInference's span kind: Arize Phoenix (and other OpenInference back ends) file and show a span by it, and read
retrieved documents, token counts and messages from the OpenInference names set beside the GenAI ones."""

KIND_INTERNAL = 1
KIND_CLIENT = 3
STATUS_ERROR = 2

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def nanos(recorded_at: str) -> int:
    """An event's ``recorded_at`` (ISO 8601, microseconds, UTC) as Unix nanoseconds, exactly."""
    return (datetime.fromisoformat(recorded_at) - _EPOCH) // timedelta(microseconds=1) * 1000


def otlp_id(size: int, *parts: str) -> str:
    """A trace (16 bytes) or span (8 bytes) id as OTLP JSON spells it (hex), derived from ``parts``; never all
    zeros, which OTLP reads as no id."""
    digest = hashlib.sha256("\0".join(("p2w-rt otel", *parts)).encode()).digest()[:size]
    return (digest if any(digest) else b"\1" * size).hex()


def _value(value: Any) -> dict[str, Any]:
    """An ``AnyValue`` in OTLP JSON: 64-bit integers as strings, non-finite doubles as their proto3 JSON names."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        if math.isfinite(value):
            return {"doubleValue": value}
        return {"doubleValue": "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")}
    if isinstance(value, list | tuple):
        return {"arrayValue": {"values": [_value(v) for v in value]}}
    return {"stringValue": str(value)}


def attributes(values: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``KeyValue`` list of ``values``, None left out (an attribute the recording does not know)."""
    return [{"key": key, "value": _value(v)} for key, v in values.items() if v is not None]


def to_json(value: Any) -> str:
    return orjson.dumps(value).decode()


@dataclass(slots=True)
class Span:
    span_id: str
    parent: Span | None
    name: str
    start: int
    end: int
    kind: int = KIND_INTERNAL
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[tuple[int, str, dict[str, Any]]] = field(default_factory=list)
    error: str | None = None

    def cover(self, start: int, end: int) -> None:
        """Stretch this span and every ancestor over ``start``..``end``: a parent holds its children."""
        span: Span | None = self
        while span is not None:
            span.start, span.end = min(span.start, start), max(span.end, end)
            span = span.parent

    def event(self, at: int, name: str, values: dict[str, Any]) -> None:
        self.events.append((at, name, values))
        self.cover(at, at)

    def to_otlp(self, trace_id: str) -> dict[str, Any]:
        span: dict[str, Any] = {
            "traceId": trace_id,
            "spanId": self.span_id,
            "parentSpanId": self.parent.span_id if self.parent is not None else "",
            "name": self.name,
            "kind": self.kind,
            "startTimeUnixNano": str(self.start),
            "endTimeUnixNano": str(self.end),
            "attributes": attributes(self.attributes),
            "events": [
                {"timeUnixNano": str(at), "name": name, "attributes": attributes(values)}
                for at, name, values in self.events
            ],
        }
        if self.error is not None:
            span["status"] = {"code": STATUS_ERROR, "message": self.error}
        return span


def otlp_protobuf(traces: Mapping[str, Any]) -> bytes:
    """One ``TracesData`` of ``otel_traces`` in the OTLP protobuf encoding (what OTLP/HTTP collectors take as
    ``application/x-protobuf``, and all some take). ``TracesData`` and ``ExportTraceServiceRequest`` are the same
    message on the wire, so these bytes are a request body; concatenated they parse as one ``TracesData``."""
    from google.protobuf import json_format
    from opentelemetry.proto.trace.v1.trace_pb2 import TracesData

    message = json_format.ParseDict(_base64_ids(traces), TracesData())
    return message.SerializeToString(deterministic=True)


def _base64_ids(traces: Mapping[str, Any]) -> dict[str, Any]:
    """``traces`` with its hex ids (OTLP JSON's spelling) in base64 (protobuf JSON's, which ``ParseDict`` reads)."""

    def b64(hex_id: str) -> str:
        return base64.b64encode(bytes.fromhex(hex_id)).decode()

    resource_spans = []
    for rs in traces["resourceSpans"]:
        scopes = []
        for scope in rs["scopeSpans"]:
            spans = [
                span | {"traceId": b64(span["traceId"]), "spanId": b64(span["spanId"]),
                        "parentSpanId": b64(span["parentSpanId"])}
                for span in scope["spans"]
            ]  # fmt: skip
            scopes.append(scope | {"spans": spans})
        resource_spans.append(rs | {"scopeSpans": scopes})
    return {"resourceSpans": resource_spans}


def phoenix_annotations(traces: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The evaluation results of one ``TracesData`` as Arize Phoenix span annotations (the body's ``data`` of its
    ``POST /v1/span_annotations``): Phoenix shows evaluations as annotations of a span, which OTLP cannot carry, and
    files span events as plain events. A judge that cost money asked a model (``LLM``); the others are ``CODE``."""
    annotations = []
    for rs in traces["resourceSpans"]:
        for scope in rs["scopeSpans"]:
            for span in scope["spans"]:
                for event in span["events"]:
                    if event["name"] != "gen_ai.evaluation.result":
                        continue
                    values = {a["key"]: a["value"] for a in event["attributes"]}
                    score = values["gen_ai.evaluation.score.value"]["doubleValue"]
                    annotations.append({
                        "span_id": span["spanId"],
                        "name": values["gen_ai.evaluation.name"]["stringValue"],
                        "annotator_kind": "LLM" if "p2w.judge.cost_usd" in values else "CODE",
                        "result": {"score": score if isinstance(score, float) else None},
                        "metadata": {"judge_id": values["p2w.judge.id"]["stringValue"],
                                     "judge_version": values["p2w.judge.version"]["stringValue"]},
                    })  # fmt: skip
    return annotations


def span_count(traces: Mapping[str, Any]) -> int:
    """How many spans one ``TracesData`` holds."""
    return sum(len(scope["spans"]) for rs in traces["resourceSpans"] for scope in rs["scopeSpans"])
