"""A run as OpenTelemetry traces: OTLP JSON following the GenAI semantic conventions, one trace per episode.

Each counted episode's ``Trajectory`` becomes one ``TracesData`` object (a line of an OTLP JSON Lines file, the OTLP
file exporter's format; the body of an OTLP/HTTP JSON request): an ``invoke_agent`` root span, a span per step,
``chat`` spans for LLM calls, ``history.query`` spans holding their ``retrieval`` span and the generator's
call, ``execute_tool`` spans for actions, judgments as ``gen_ai.evaluation.result`` events on the root span.
Times are the recorded ones; trace and span ids are hashes of the run's stream and event ids, so exporting a
run twice gives the same bytes. The mapping, and what is not mapped: docs/design/otel.md.
"""

from p2w_rt.replay.otel._collector import CollectorError
from p2w_rt.replay.otel._export import OtelSummary, TraceFileError, export_otel
from p2w_rt.replay.otel._llm import error_type
from p2w_rt.replay.otel._otlp import SCOPE, nanos, otlp_protobuf, phoenix_annotations, span_count
from p2w_rt.replay.otel._trace import episode_trace
from p2w_rt.replay.otel._traces import otel_traces

__all__ = [
    "SCOPE",
    "CollectorError",
    "OtelSummary",
    "TraceFileError",
    "episode_trace",
    "error_type",
    "export_otel",
    "nanos",
    "otel_traces",
    "otlp_protobuf",
    "phoenix_annotations",
    "span_count",
]
