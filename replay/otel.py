"""A run as OpenTelemetry traces: OTLP JSON following the GenAI semantic conventions, one trace per episode.

Each counted episode becomes one ``TracesData`` object (a line of an OTLP JSON Lines file, the OTLP file
exporter's format; the body of an OTLP/HTTP JSON request): an ``invoke_agent`` root span, a span per step,
``chat`` spans for LLM calls, ``history.query`` spans holding their ``retrieval`` span and the generator's
call, ``execute_tool`` spans for actions, judgments as ``gen_ai.evaluation.result`` events on the root span.
Times are the recorded ones; trace and span ids are hashes of the run's stream and event ids, so exporting a
run twice gives the same bytes. The mapping, and what is not mapped: docs/design/otel.md.
"""

from __future__ import annotations

import base64
import hashlib
import math
import re
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from p2w_rt.replay.classify import ClassificationRecord, current_classifications
from p2w_rt.replay.judges import JudgmentRecord, current_judgments
from p2w_rt.schemas import (
    Action,
    EpisodeFinished,
    EpisodeStarted,
    FinalState,
    HistoryQuery,
    HistoryRetrieval,
    LlmCall,
    Observation,
    PageCapture,
    Rationale,
    StoredEvent,
)
from p2w_runtime.domain import RunInfo, episodes_of
from p2w_runtime.domain.trajectory import ProjectionError
from p2w_runtime.store import EventStore

PROVIDER = "openai"
"""``gen_ai.provider.name`` of every call: the recorder talks to any endpoint through the ``openai`` client, and the
conventions name the client's provider when the server behind it is not known."""
SCOPE = "p2w-rt"
MEMORY_ACCESS = "memory_access"
"""The action that asks the user history: its ``execute_tool`` span holds the history query it opens."""

OI_KIND = "openinference.span.kind"
"""OpenInference's span kind: Arize Phoenix (and other OpenInference back ends) file and show a span by it, and read
retrieved documents, token counts and messages from the OpenInference names set beside the GenAI ones."""

KIND_INTERNAL = 1
KIND_CLIENT = 3
STATUS_ERROR = 2

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_HTTP_STATUS = re.compile(r"HTTP (\d{3})\b")
_ERROR_PREFIXES = (
    ("timeout", "timeout"),
    ("connection error", "connection_error"),
    ("malformed output", "malformed_output"),
    ("bad response", "malformed_output"),
)
"""How the recorders word a failed call (``p2w_runtime/llm/_retry.py``, the recording transport) -> its kind."""
_REQUEST_PARAMS = {
    "temperature": "gen_ai.request.temperature",
    "top_p": "gen_ai.request.top_p",
    "frequency_penalty": "gen_ai.request.frequency_penalty",
    "presence_penalty": "gen_ai.request.presence_penalty",
    "max_tokens": "gen_ai.request.max_tokens",
    "max_completion_tokens": "gen_ai.request.max_tokens",
    "seed": "gen_ai.request.seed",
}
"""``llm.call`` params -> the request attribute that carries them (``stop``, ``n`` and ``response_format`` below)."""


def nanos(recorded_at: str) -> int:
    """An event's ``recorded_at`` (ISO 8601, microseconds, UTC) as Unix nanoseconds, exactly."""
    return (datetime.fromisoformat(recorded_at) - _EPOCH) // timedelta(microseconds=1) * 1000


def _id(size: int, *parts: str) -> str:
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


def _attributes(values: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``KeyValue`` list of ``values``, None left out (an attribute the recording does not know)."""
    return [{"key": key, "value": _value(v)} for key, v in values.items() if v is not None]


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()


@dataclass(slots=True)
class _Span:
    span_id: str
    parent: _Span | None
    name: str
    start: int
    end: int
    kind: int = KIND_INTERNAL
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[tuple[int, str, dict[str, Any]]] = field(default_factory=list)
    error: str | None = None

    def cover(self, start: int, end: int) -> None:
        """Stretch this span and every ancestor over ``start``..``end``: a parent holds its children."""
        span: _Span | None = self
        while span is not None:
            span.start, span.end = min(span.start, start), max(span.end, end)
            span = span.parent

    def event(self, at: int, name: str, attributes: dict[str, Any]) -> None:
        self.events.append((at, name, attributes))
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
            "attributes": _attributes(self.attributes),
            "events": [
                {"timeUnixNano": str(at), "name": name, "attributes": _attributes(values)}
                for at, name, values in self.events
            ],
        }
        if self.error is not None:
            span["status"] = {"code": STATUS_ERROR, "message": self.error}
        return span


def _input_messages(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI chat messages as ``gen_ai.input.messages`` parts; a non-text part keeps only its type."""
    converted = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            parts = [{"type": "text", "content": content}]
        else:
            parts = [
                {"type": "text", "content": part.get("text", "")} if part.get("type") == "text" else
                {"type": str(part.get("type", "unknown"))}
                for part in content or [] if isinstance(part, Mapping)
            ]  # fmt: skip
        converted.append({"role": str(message.get("role", "user")), "parts": parts})
    return converted


def error_type(error: str) -> str:
    """``error.type`` of a failed call, from its recorded message: the HTTP status code when the endpoint answered
    one (what the conventions name for HTTP errors), ``timeout``, ``connection_error``, ``malformed_output``; else
    ``_OTHER``."""
    if status := _HTTP_STATUS.match(error):
        return status.group(1)
    for prefix, kind in _ERROR_PREFIXES:
        if error.startswith(prefix):
            return kind
    return "_OTHER"


def _openinference_llm(call: LlmCall, *, content: bool) -> dict[str, Any]:
    """The call under OpenInference's names: model, token counts, and (with content) the messages' text."""
    usage = call.usage
    values: dict[str, Any] = {
        OI_KIND: "LLM",
        "llm.model_name": call.model,
        "llm.token_count.prompt": usage.prompt_tokens if usage else None,
        "llm.token_count.completion": usage.completion_tokens if usage else None,
        "llm.token_count.total": usage.total_tokens if usage else None,
    }
    if content:
        for i, message in enumerate(_input_messages(call.messages)):
            values[f"llm.input_messages.{i}.message.role"] = message["role"]
            texts = [part["content"] for part in message["parts"] if part.get("type") == "text"]
            values[f"llm.input_messages.{i}.message.content"] = "\n".join(texts)
        if call.response is not None:
            values["llm.output_messages.0.message.role"] = "assistant"
            values["llm.output_messages.0.message.content"] = call.response
    return values


def _llm_attributes(call: LlmCall, *, content: bool) -> dict[str, Any]:
    usage = call.usage
    values: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": PROVIDER,
        "gen_ai.system": PROVIDER,  # the name before gen_ai.provider.name, which older backends still read
        "gen_ai.request.model": call.model,
        "gen_ai.response.finish_reasons": [call.finish_reason] if call.finish_reason else None,
        "gen_ai.usage.input_tokens": usage.prompt_tokens if usage else None,
        "gen_ai.usage.output_tokens": usage.completion_tokens if usage else None,
    }
    for param, value in call.params.items():
        if param in _REQUEST_PARAMS and isinstance(value, int | float) and not isinstance(value, bool):
            values[_REQUEST_PARAMS[param]] = value
    stop = call.params.get("stop")
    values["gen_ai.request.stop_sequences"] = (
        [stop] if isinstance(stop, str) else stop if isinstance(stop, list) else None
    )
    if isinstance(n := call.params.get("n"), int) and n != 1:
        values["gen_ai.request.choice.count"] = n
    if isinstance(fmt := call.params.get("response_format"), Mapping):
        values["gen_ai.output.type"] = "text" if fmt.get("type") == "text" else "json"
    if call.error is not None:
        values["error.type"] = error_type(call.error)
    if content:
        values["gen_ai.input.messages"] = _json(_input_messages(call.messages))
        if call.response is not None:
            answer: dict[str, Any] = {"role": "assistant", "parts": [{"type": "text", "content": call.response}]}
            if call.finish_reason:
                answer["finish_reason"] = call.finish_reason
            values["gen_ai.output.messages"] = _json([answer])
    return (
        values
        | _openinference_llm(call, content=content)
        | {
            "p2w.llm.role": call.role,
            "p2w.llm.fingerprint": call.fingerprint,
            "p2w.llm.ordinal": call.ordinal,
            "p2w.llm.attempt": call.attempt,
            "p2w.cost_usd": call.cost_usd,
        }
    )


class _Episode:
    """Folds one episode's events, in stream order, into its spans."""

    def __init__(self, stream: str, run: RunInfo, started: StoredEvent, *, content: bool) -> None:
        self.stream, self.run, self.content = stream, run, content
        self.trace_id = _id(16, "trace", stream)
        at = nanos(started.recorded_at)
        self.root = _Span(_id(8, "span", started.event_id), None, f"invoke_agent {run.started.agent}", at, at)
        self.spans = [self.root]
        self.steps: dict[int, _Span] = {}
        self.by_event: dict[str, _Span] = {}
        self.access: _Span | None = None
        """The history access whose answer (generator call and rationale) has not come yet."""
        self.asking: _Span | None = None
        """The ``memory_access`` action just executed: the history query that follows is its work."""
        self.prev = at
        self.tokens = [0, 0]
        payload = started.decode_payload()
        if not isinstance(payload, EpisodeStarted):
            raise ProjectionError(f"stream {stream}: first event is {started.type}, not episode.started")
        self.persona = payload.persona
        self.root.attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": run.started.agent,
            "gen_ai.request.model": run.started.backbone_model,
            "gen_ai.conversation.id": stream,
            OI_KIND: "AGENT",
            "input.value": payload.query,
            "p2w.run.id": run.run_id,
            "p2w.episode.stream": stream,
            "p2w.episode.id": payload.episode_id,
            "p2w.task.id": payload.task_id,
            "p2w.persona": payload.persona,
            "p2w.level": payload.level,
            "p2w.scheme": payload.scheme or run.started.scheme,
            "p2w.query": payload.query,
            "p2w.start_url": payload.start_url,
            "p2w.fork.source_stream": payload.fork.source_stream if payload.fork else None,
            "p2w.fork.at_step": payload.fork.at_step if payload.fork else None,
        }

    def _span(self, event_id: str, parent: _Span, name: str, start: int, end: int, kind: int = KIND_INTERNAL) -> _Span:
        span = _Span(_id(8, "span", event_id), parent, name, start, end, kind)
        parent.cover(start, end)
        self.spans.append(span)
        self.by_event[event_id] = span
        return span

    def _step(self, step: int | None) -> _Span:
        """The span of ``step`` (the root for an event of no step), opened where the previous event ended."""
        if step is None:
            return self.root
        if step not in self.steps:
            span = _Span(_id(8, "step", self.stream, str(step)), self.root, f"step {step}", self.prev, self.prev)
            span.attributes |= {"p2w.step": step, OI_KIND: "CHAIN"}
            self.spans.append(span)
            self.steps[step] = span
        return self.steps[step]

    def add(self, stored: StoredEvent) -> None:
        at, prev = nanos(stored.recorded_at), self.prev
        payload = stored.decode_payload()
        match payload:
            case Observation():
                step = self._step(payload.step)
                step.attributes.setdefault("p2w.url", payload.url)
                step.attributes.setdefault("p2w.title", payload.title)
                step.cover(prev, at)
                seen = {"p2w.url": payload.url, "p2w.title": payload.title, "p2w.tabs": payload.tabs,
                        "p2w.description": payload.description}  # fmt: skip
                step.event(at, "p2w.observation", seen)
            case LlmCall():
                self._llm(stored.event_id, payload, at)
            case Rationale():
                values = {"p2w.rationale.source": payload.source, "p2w.rationale.text": payload.text,
                          "p2w.rationale.cited_entry_ids": payload.cited_entry_ids or None}  # fmt: skip
                if payload.source == "generator" and self.access is not None:
                    self.access.event(at, "p2w.rationale", values)
                    self.access = None
                else:
                    self._step(payload.step).event(at, "p2w.rationale", values)
            case Action():
                self._action(stored.event_id, payload, prev, at)
            case HistoryQuery():
                parent, self.asking = self.asking or self._step(payload.step), None
                span = self._span(stored.event_id, parent, "history.query", prev, at)
                span.attributes = {"p2w.history.phase": payload.phase, "p2w.history.query": payload.query,
                                   "p2w.history.reason": payload.reason, OI_KIND: "CHAIN",
                                   "input.value": payload.query}  # fmt: skip
                self.access = span
            case HistoryRetrieval():
                self._retrieval(stored, payload, prev, at)
            case FinalState():
                self.root.event(at, "p2w.final_state", {"p2w.url": payload.url, "p2w.title": payload.title})
            case PageCapture():
                self.root.event(at, "p2w.page_capture", {
                    "p2w.capture.index": payload.index, "p2w.capture.requested_url": payload.requested_url,
                    "p2w.capture.final_url": payload.final_url, "p2w.capture.status": payload.status,
                    "p2w.capture.title": payload.title, "p2w.capture.error": payload.error})  # fmt: skip
            case EpisodeFinished():
                self.root.attributes |= {
                    "p2w.end_reason": payload.end_reason, "p2w.answer": payload.answer,
                    "p2w.final_url": payload.final_url, "p2w.steps": payload.steps, "p2w.cost_usd": payload.cost_usd,
                    "p2w.end_detail": payload.detail, "output.value": payload.answer,
                }  # fmt: skip
                if payload.end_reason == "error":
                    self.root.error = payload.detail or "error"
                    self.root.attributes["error.type"] = "p2w.episode_error"
            case _:
                pass
        if not isinstance(payload, Action | HistoryQuery):
            self.asking = None  # only the query right after the action is its work
        self.root.cover(at, at)
        self.prev = max(prev, at)

    def _llm(self, event_id: str, call: LlmCall, at: int) -> None:
        answering = call.role == "generator" and self.access is not None
        parent = self.access if answering and self.access is not None else self._step(call.step)
        span = self._span(event_id, parent, f"chat {call.model}", at - round(call.latency_s * 1e9), at, KIND_CLIENT)
        span.attributes = _llm_attributes(call, content=self.content)
        span.error = call.error
        if call.usage is not None:
            self.tokens[0] += call.usage.prompt_tokens
            self.tokens[1] += call.usage.completion_tokens

    def _action(self, event_id: str, action: Action, prev: int, at: int) -> None:
        tool = action.parsed.name if action.parsed is not None else "unparsed"
        span = self._span(event_id, self._step(action.step), f"execute_tool {tool}", prev, at)
        span.attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.type": "function",
            "gen_ai.tool.call.id": event_id,
            "gen_ai.tool.call.arguments": _json(action.parsed.args) if action.parsed is not None else None,
            "p2w.action.raw": action.raw,
            "p2w.action.status": action.status,
            "error.type": action.status if action.status != "executed" else None,
            "p2w.action.duration_s": action.duration_s,
            OI_KIND: "TOOL",
            "tool.name": tool,
        }
        if action.status != "executed":
            span.error = action.error or action.status
        self.asking = span if tool == MEMORY_ACCESS and action.status == "executed" else None

    def _retrieval(self, stored: StoredEvent, retrieval: HistoryRetrieval, prev: int, at: int) -> None:
        """A retrieval under the query it answers, from that query's start: the recorder stages the pair after the
        search, so the query's own interval is the search's time."""
        query = self.by_event.get(stored.causation_id or "")
        parent = query if query is not None else self._step(retrieval.step)
        span = self._span(stored.event_id, parent, f"retrieval history/{self.persona}",
                          query.start if query is not None else prev, at)  # fmt: skip
        documents = [{"id": str(hit.entry_id), "score": hit.score} for hit in retrieval.hits]
        span.attributes = {
            "gen_ai.operation.name": "retrieval",
            "gen_ai.data_source.id": f"history/{self.persona}",
            "gen_ai.request.model": retrieval.model_id,
            "gen_ai.request.top_k": float(retrieval.k),
            "gen_ai.retrieval.query.text": retrieval.query,
            "gen_ai.retrieval.documents": _json(documents),
            "p2w.retrieval.threshold": retrieval.threshold,
            "p2w.retrieval.index_hash": retrieval.index_hash,
            "p2w.retrieval.hits": len(retrieval.hits),
            OI_KIND: "RETRIEVER",
            "input.value": retrieval.query,
        }
        for i, hit in enumerate(retrieval.hits):
            document = f"retrieval.documents.{i}.document"
            span.attributes[f"{document}.id"] = str(hit.entry_id)
            span.attributes[f"{document}.score"] = hit.score
            if self.content:
                span.attributes[f"{document}.content"] = f"{hit.entry.type}: {hit.entry.object}"
        if self.content:
            span.attributes["p2w.retrieval.entries"] = _json(
                [hit.entry.model_dump(mode="json") for hit in retrieval.hits]
            )
        if query is None:
            self.access = span

    def judged(self, judgments: Iterable[JudgmentRecord], labels: Iterable[ClassificationRecord]) -> None:
        """The episode's current judgments, one ``gen_ai.evaluation.result`` per metric, and its error labels."""
        for record in judgments:
            j = record.judgment
            for metric, score in j.metrics.items():
                result = {
                    "gen_ai.evaluation.name": f"{j.judge_id}.{metric}",
                    "gen_ai.evaluation.score.value": score,
                    "p2w.judge.id": j.judge_id,
                    "p2w.judge.version": j.judge_version,
                    "p2w.judge.cost_usd": j.cost_usd,
                    "p2w.metric": metric,
                }
                self.root.events.append((nanos(record.recorded_at), "gen_ai.evaluation.result", result))
        for labelled in labels:
            c = labelled.classification
            self.root.events.append((nanos(labelled.recorded_at), "p2w.error.classified", {
                "p2w.classifier.id": c.classifier_id, "p2w.classifier.version": c.classifier_version,
                "p2w.labels": [label.label for label in c.labels]}))  # fmt: skip

    def traces_data(self) -> dict[str, Any]:
        self.root.attributes |= {
            "gen_ai.usage.input_tokens": self.tokens[0],
            "gen_ai.usage.output_tokens": self.tokens[1],
        }
        started = self.run.started
        resource = {
            "service.name": "p2w-rt",
            "service.version": started.code_version,
            "p2w.run.id": self.run.run_id,
            "p2w.run.label": started.label,
            "p2w.run.source": started.source,
            "p2w.agent": started.agent,
            "p2w.backbone_model": started.backbone_model,
            "p2w.scheme": started.scheme,
            "p2w.dataset.id": started.dataset_id,
        }
        return {
            "resourceSpans": [{
                "resource": {"attributes": _attributes(resource)},
                "scopeSpans": [{
                    "scope": {"name": SCOPE, "version": started.code_version},
                    "spans": [span.to_otlp(self.trace_id) for span in self.spans],
                }],
            }]
        }  # fmt: skip


async def otel_traces(store: EventStore, run: RunInfo, *, content: bool = True) -> AsyncIterator[dict[str, Any]]:
    """One OTLP ``TracesData`` per counted episode of ``run``, in start order, with its current judgments and
    error labels. ``content=False`` leaves prompts, responses and retrieved entries out (``gen_ai.input.messages``,
    ``gen_ai.output.messages``, ``p2w.retrieval.entries``: most of a run's bytes, and the persona's history)."""
    judgments: dict[str, list[JudgmentRecord]] = {}
    for (stream, _), record in sorted((await current_judgments(store, run.run_id)).items()):
        judgments.setdefault(stream, []).append(record)
    labels: dict[str, list[ClassificationRecord]] = {}
    for (stream, _), c_record in sorted((await current_classifications(store, run.run_id)).items()):
        labels.setdefault(stream, []).append(c_record)
    for ref in await episodes_of(store, run.run_id):
        episode: _Episode | None = None
        async for stored in store.read_stream(ref.stream):
            if episode is None:
                episode = _Episode(ref.stream, run, stored, content=content)
            else:
                episode.add(stored)
        if episode is not None:
            episode.judged(judgments.get(ref.stream, []), labels.get(ref.stream, []))
            yield episode.traces_data()


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
