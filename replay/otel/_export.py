"""``otel`` as an exporter (``replay/exports.py``): the traces of every run to a file, a collector, or both."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from p2w_rt.replay.exports import ExportRequest
from p2w_rt.replay.otel._collector import annotate, send_traces
from p2w_rt.replay.otel._otlp import otlp_protobuf, phoenix_annotations, span_count
from p2w_rt.replay.otel._traces import otel_traces
from p2w_runtime.domain import RunInfo
from p2w_runtime.errors import UserError
from p2w_runtime.files import check_output, partial_path, publish
from p2w_runtime.store import EventStore


class TraceFileError(UserError):
    """The OpenTelemetry trace file cannot be written."""


@dataclass(frozen=True, slots=True)
class OtelSummary:
    runs: tuple[RunInfo, ...]
    path: Path | None
    endpoint: str | None
    traces: int
    spans: int
    annotations: int | None
    """Judgments sent as Phoenix annotations; None when none were asked for."""


async def export_otel(store: EventStore, runs: Sequence[RunInfo], request: ExportRequest) -> OtelSummary:
    """One OTLP ``TracesData`` per episode: a line of OTLP JSON Lines (the OTLP file exporter's format) or a
    protobuf message appended to ``request.output`` (concatenated, they are one ``TracesData``), and a request to
    ``request.endpoint``. The file is written whole or not at all."""
    path, endpoint = request.output, request.endpoint
    if path is not None:
        check_output(path, force=request.force, what="the trace file", error=TraceFileError)
    partial = partial_path(path) if path is not None else None
    traces = spans = 0
    annotations: list[dict[str, Any]] = []
    try:
        with partial.open("wb") if partial is not None else contextlib.nullcontext() as out:
            for run in runs:
                async for data in otel_traces(store, run, content=request.content):
                    body = otlp_protobuf(data) if request.protobuf or endpoint else b""
                    if out is not None:
                        out.write(body if request.protobuf else orjson.dumps(data) + b"\n")
                    if endpoint is not None:
                        await asyncio.to_thread(send_traces, endpoint, body, traces)
                    traces, spans = traces + 1, spans + span_count(data)
                    annotations += phoenix_annotations(data) if request.annotations else []
        if endpoint is not None and annotations:
            await annotate(endpoint, annotations)
        if partial is not None and path is not None:
            publish(partial, path, force=request.force, error=TraceFileError)
    except OSError as exc:
        raise TraceFileError(f"{path}: cannot write the trace file ({exc.strerror})") from None
    finally:
        if partial is not None:
            with contextlib.suppress(OSError):  # never created on a read-only folder: the error above is the one said
                partial.unlink(missing_ok=True)
    sent = len(annotations) if request.annotations else None
    return OtelSummary(tuple(runs), path, endpoint, traces, spans, sent)
