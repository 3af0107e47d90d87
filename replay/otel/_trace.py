"""One episode's ``Trajectory`` as one OTLP trace: its records, in stream order, placed as spans and span events.

Built from the trajectory read ``detailed`` (``load_trajectory(..., detailed=True)``): when each record's event was
recorded, and each call's request and latency. A span starts where the previous event ended and ends where its own
was recorded; an LLM call's span is its latency back from its record.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from p2w_rt.replay.classify import ClassificationRecord
from p2w_rt.replay.judges import JudgmentRecord
from p2w_rt.replay.otel._llm import llm_attributes
from p2w_rt.replay.otel._otlp import (
    KIND_CLIENT,
    KIND_INTERNAL,
    OI_KIND,
    SCOPE,
    Span,
    attributes,
    nanos,
    otlp_id,
    to_json,
)
from p2w_runtime.domain import RunInfo
from p2w_runtime.domain.trajectory import (
    ActionRecord,
    CaptureRecord,
    EpisodeRecord,
    FinalStateRecord,
    FinishedRecord,
    HistoryAccess,
    LlmCallRecord,
    ObservationRecord,
    ProjectionError,
    RationaleRecord,
    RetrievalRecord,
    Trajectory,
)

MEMORY_ACCESS = "memory_access"
"""The action that asks the user history: its ``execute_tool`` span holds the history query it opens."""


class _Trace:
    """The spans of one trajectory, placed record by record."""

    def __init__(self, t: Trajectory, run: RunInfo, *, content: bool) -> None:
        if t.started_at is None or len(t.recorded_at) != len(t.records):
            raise ProjectionError(f"stream {t.stream}: an OpenTelemetry trace needs the trajectory read detailed")
        self.t, self.run, self.content = t, run, content
        self.trace_id = otlp_id(16, "trace", t.stream)
        at = nanos(t.started_at)
        self.root = Span(otlp_id(8, "span", t.started_event_id), None, f"invoke_agent {run.started.agent}", at, at)
        self.spans = [self.root]
        self.steps: dict[int, Span] = {}
        self.by_event: dict[str, Span] = {}
        self.access_of = {r.event_id: access for access in t.history for r in access.retrievals}
        self.access: Span | None = None
        """The history access whose answer (generator call and rationale) has not come yet."""
        self.asking: Span | None = None
        """The ``memory_access`` action just executed: the history query that follows is its work."""
        self.prev = at
        self.tokens = [0, 0]
        self.root.attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": run.started.agent,
            "gen_ai.request.model": run.started.backbone_model,
            "gen_ai.conversation.id": t.stream,
            OI_KIND: "AGENT",
            "input.value": t.query,
            "p2w.run.id": run.run_id,
            "p2w.episode.stream": t.stream,
            "p2w.episode.id": t.episode_id,
            "p2w.task.id": t.task_id,
            "p2w.persona": t.persona,
            "p2w.level": t.level,
            "p2w.scheme": t.scheme or run.started.scheme,
            "p2w.query": t.query,
            "p2w.start_url": t.start_url,
            "p2w.fork.source_stream": t.fork.source_stream if t.fork else None,
            "p2w.fork.at_step": t.fork.at_step if t.fork else None,
        }
        for record, recorded_at in zip(t.records, t.recorded_at, strict=True):
            self._add(record, nanos(recorded_at))

    def _span(self, event_id: str, parent: Span, name: str, start: int, end: int, kind: int = KIND_INTERNAL) -> Span:
        span = Span(otlp_id(8, "span", event_id), parent, name, start, end, kind)
        parent.cover(start, end)
        self.spans.append(span)
        self.by_event[event_id] = span
        return span

    def _step(self, step: int | None) -> Span:
        """The span of ``step`` (the root for a record of no step), opened where the previous event ended."""
        if step is None:
            return self.root
        if step not in self.steps:
            span = Span(otlp_id(8, "step", self.t.stream, str(step)), self.root, f"step {step}", self.prev, self.prev)
            span.attributes |= {"p2w.step": step, OI_KIND: "CHAIN"}
            self.spans.append(span)
            self.steps[step] = span
        return self.steps[step]

    def _add(self, record: EpisodeRecord, at: int) -> None:
        prev = self.prev
        match record:
            case ObservationRecord():
                step = self._step(record.step)
                step.attributes.setdefault("p2w.url", record.url)
                step.attributes.setdefault("p2w.title", record.title)
                step.cover(prev, at)
                seen = {"p2w.url": record.url, "p2w.title": record.title, "p2w.tabs": record.tabs,
                        "p2w.description": record.description}  # fmt: skip
                step.event(at, "p2w.observation", seen)
            case LlmCallRecord():
                self._llm(record, at)
            case RationaleRecord():
                values = {"p2w.rationale.source": record.source, "p2w.rationale.text": record.text,
                          "p2w.rationale.cited_entry_ids": record.cited_entry_ids or None}  # fmt: skip
                if record.source == "generator" and self.access is not None:
                    self.access.event(at, "p2w.rationale", values)
                    self.access = None
                else:
                    self._step(record.step).event(at, "p2w.rationale", values)
            case ActionRecord():
                self._action(record, prev, at)
            case HistoryAccess():
                parent, self.asking = self.asking or self._step(record.step), None
                span = self._span(record.event_id, parent, "history.query", prev, at)
                span.attributes = {"p2w.history.phase": record.phase, "p2w.history.query": record.query,
                                   "p2w.history.reason": record.reason, OI_KIND: "CHAIN",
                                   "input.value": record.query}  # fmt: skip
                self.access = span
            case RetrievalRecord():
                self._retrieval(record, prev, at)
            case FinalStateRecord():
                self.root.event(at, "p2w.final_state", {"p2w.url": record.url, "p2w.title": record.title})
            case CaptureRecord():
                self.root.event(at, "p2w.page_capture", {
                    "p2w.capture.index": record.index, "p2w.capture.requested_url": record.requested_url,
                    "p2w.capture.final_url": record.final_url, "p2w.capture.status": record.status,
                    "p2w.capture.title": record.title, "p2w.capture.error": record.error})  # fmt: skip
            case FinishedRecord():
                self._finished(record)
        if not isinstance(record, ActionRecord | HistoryAccess):
            self.asking = None  # only the query right after the action is its work
        self.root.cover(at, at)
        self.prev = max(prev, at)

    def _finished(self, end: FinishedRecord) -> None:
        self.root.attributes |= {
            "p2w.end_reason": end.end_reason, "p2w.answer": end.answer, "p2w.final_url": end.final_url,
            "p2w.steps": end.steps, "p2w.cost_usd": end.cost_usd, "p2w.end_detail": end.detail,
            "output.value": end.answer,
        }  # fmt: skip
        if end.end_reason == "error":
            self.root.error = end.detail or "error"
            self.root.attributes["error.type"] = "p2w.episode_error"

    def _llm(self, call: LlmCallRecord, at: int) -> None:
        detail = self.t.call_details[call.event_id]
        answering = call.role == "generator" and self.access is not None
        parent = self.access if answering and self.access is not None else self._step(call.step)
        start = at - round(detail.latency_s * 1e9)
        span = self._span(call.event_id, parent, f"chat {call.model}", start, at, KIND_CLIENT)
        span.attributes = llm_attributes(call, detail, content=self.content)
        span.error = call.error
        if call.usage is not None:
            self.tokens[0] += call.usage.prompt_tokens
            self.tokens[1] += call.usage.completion_tokens

    def _action(self, action: ActionRecord, prev: int, at: int) -> None:
        tool = action.parsed.name if action.parsed is not None else "unparsed"
        span = self._span(action.event_id, self._step(action.step), f"execute_tool {tool}", prev, at)
        span.attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.type": "function",
            "gen_ai.tool.call.id": action.event_id,
            "gen_ai.tool.call.arguments": to_json(action.parsed.args) if action.parsed is not None else None,
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

    def _retrieval(self, retrieval: RetrievalRecord, prev: int, at: int) -> None:
        """A retrieval under the query it answers, from that query's start: the recorder stages the pair after the
        search, so the query's own interval is the search's time."""
        access = self.access_of.get(retrieval.event_id)
        query = self.by_event.get(access.query_event_id or "") if access is not None else None
        parent = query if query is not None else self._step(retrieval.step)
        persona = self.t.persona
        start = query.start if query is not None else prev
        span = self._span(retrieval.event_id, parent, f"retrieval history/{persona}", start, at)
        documents = [{"id": str(hit.entry_id), "score": hit.score} for hit in retrieval.hits]
        span.attributes = {
            "gen_ai.operation.name": "retrieval",
            "gen_ai.data_source.id": f"history/{persona}",
            "gen_ai.request.model": retrieval.model_id,
            "gen_ai.request.top_k": float(retrieval.k),
            "gen_ai.retrieval.query.text": retrieval.query,
            "gen_ai.retrieval.documents": to_json(documents),
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
            span.attributes["p2w.retrieval.entries"] = to_json(self.t.retrieved_entries[retrieval.event_id])
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
                "resource": {"attributes": attributes(resource)},
                "scopeSpans": [{
                    "scope": {"name": SCOPE, "version": started.code_version},
                    "spans": [span.to_otlp(self.trace_id) for span in self.spans],
                }],
            }]
        }  # fmt: skip


def episode_trace(
    t: Trajectory,
    run: RunInfo,
    judgments: Iterable[JudgmentRecord] = (),
    labels: Iterable[ClassificationRecord] = (),
    *,
    content: bool = True,
) -> dict[str, Any]:
    """One OTLP ``TracesData`` of the episode ``t`` (read ``detailed``) of ``run``, with its judgments and labels."""
    trace = _Trace(t, run, content=content)
    trace.judged(judgments, labels)
    return trace.traces_data()
