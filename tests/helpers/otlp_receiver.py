"""A real OTLP/HTTP trace receiver on 127.0.0.1 for the tests: what it accepts is decoded into opentelemetry-proto's
``ExportTraceServiceRequest``, so a malformed file fails here as it would at a collector.

JSON bodies (``application/json``) follow the OTLP JSON encoding: protobuf's JSON mapping, except that trace and
span ids are hex (not base64) and enums are integers. The ids are checked and turned into bytes, then
``google.protobuf.json_format`` parses the rest strictly: an unknown field, a wrong type or a bad value is refused
with HTTP 400. Protobuf bodies (``application/x-protobuf``) are parsed as they are.

``POST /v1/span_annotations`` takes span annotations as Arize Phoenix's REST API does (``{"data": [...]}``), each
checked for the fields Phoenix requires, and keeps them in ``annotations``.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span

ID_BYTES = {"traceId": 16, "spanId": 8, "parentSpanId": 8}


class OtlpJsonError(ValueError):
    """The body is not an OTLP JSON trace export."""


def _bytes_id(holder: dict[str, Any], key: str, *, optional: bool) -> None:
    value = holder.get(key, "")
    if value == "" and optional:
        return
    if not isinstance(value, str) or len(value) != 2 * ID_BYTES[key]:
        raise OtlpJsonError(f"{key} {value!r} is not {ID_BYTES[key]} bytes of hex")
    try:
        raw = bytes.fromhex(value)
    except ValueError:
        raise OtlpJsonError(f"{key} {value!r} is not hex") from None
    holder[key] = base64.b64encode(raw).decode()


def decode_otlp_json(body: bytes) -> ExportTraceServiceRequest:
    """One OTLP JSON trace export (a line of an OTLP JSON Lines file) as the protobuf message, or ``OtlpJsonError``."""
    try:
        data = json.loads(body)
        for resource_spans in data.get("resourceSpans", []):
            for scope_spans in resource_spans.get("scopeSpans", []):
                for span in scope_spans.get("spans", []):
                    _bytes_id(span, "traceId", optional=False)
                    _bytes_id(span, "spanId", optional=False)
                    _bytes_id(span, "parentSpanId", optional=True)
                    for link in span.get("links", []):
                        _bytes_id(link, "traceId", optional=False)
                        _bytes_id(link, "spanId", optional=False)
                    if not isinstance(span.get("kind", 0), int) or not isinstance(
                        span.get("status", {}).get("code", 0), int
                    ):
                        raise OtlpJsonError("OTLP JSON enums are integers")
        return json_format.ParseDict(data, ExportTraceServiceRequest(), ignore_unknown_fields=False)
    except (json_format.ParseError, json.JSONDecodeError, AttributeError, TypeError) as exc:
        raise OtlpJsonError(str(exc)) from None


def _annotations(body: bytes) -> list[dict[str, Any]]:
    data = json.loads(body)["data"]
    for annotation in data:
        assert set(annotation) <= {"span_id", "name", "annotator_kind", "result", "metadata", "identifier"}
        assert len(bytes.fromhex(annotation["span_id"])) == 8 and annotation["name"]
        assert annotation["annotator_kind"] in {"LLM", "CODE", "HUMAN"}
        assert set(annotation["result"]) <= {"label", "score", "explanation"}
    return list(data)


class OtlpReceiver:
    """``POST /v1/traces`` on 127.0.0.1 (a free port); every accepted export is kept, decoded, in ``requests``."""

    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        self.refused: list[str] = []
        self.annotations: list[dict[str, Any]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                kind = self.headers.get("Content-Type", "")
                if self.path.startswith("/v1/span_annotations"):
                    receiver.annotations += _annotations(body)
                    self._answer(200, b'{"data": []}')
                    return
                try:
                    if self.path != "/v1/traces":
                        raise OtlpJsonError(f"no endpoint {self.path}")
                    if kind == "application/json":
                        request = decode_otlp_json(body)
                    elif kind == "application/x-protobuf":
                        request = ExportTraceServiceRequest.FromString(body)
                    else:
                        raise OtlpJsonError(f"unsupported content type {kind!r}")
                except Exception as exc:  # anything unparseable is the client's fault: 400
                    receiver.refused.append(str(exc))
                    self._answer(400, json.dumps({"message": str(exc)}).encode())
                    return
                receiver.requests.append(request)
                self._answer(200, json_format.MessageToJson(ExportTraceServiceResponse()).encode())

            def _answer(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/traces"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> OtlpReceiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()

    def spans(self) -> Iterator[tuple[dict[str, str], Span]]:
        """Every span received, with its resource's string attributes."""
        for request in self.requests:
            for resource_spans in request.resource_spans:
                resource = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        yield resource, span
