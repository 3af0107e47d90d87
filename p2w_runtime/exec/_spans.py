"""An outside agent's OpenTelemetry spans (OTLP/HTTP, protobuf or JSON) as its episode's actions and rationales.

Which spans count follows the OpenTelemetry GenAI conventions: a span whose ``gen_ai.operation.name`` is
``execute_tool`` is one action of the agent, ``gen_ai.tool.name`` [each value of ``gen_ai.tool.call.arguments``],
``invalid``
with the span's status message when its status is an error. Its ``gen_ai.agent.rationale`` or ``p2w.rationale``
attribute, when there is one, is the step's rationale, written before the action. Model-call spans are not
recorded again: the proxy has the calls themselves. Spans of one export are taken in the order they started.

Once an episode has had an action span, its navigations are no longer recorded as ``goto`` actions: the spans say
what the agent did, the navigations only what happened.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from p2w_rt.schemas import ParsedAction
from p2w_runtime.recording import EpisodeRecorder

TOOL_OPERATION = "execute_tool"
RATIONALE_KEYS = ("gen_ai.agent.rationale", "p2w.rationale")
_ERROR_STATUS = (2, "STATUS_CODE_ERROR")


def spans_of(body: bytes, content_type: str) -> list[dict[str, Any]]:
    """The spans of an OTLP/HTTP trace export, in OTLP JSON form; ``ValueError`` when it is none."""
    if content_type == "application/json":
        try:
            data = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"the OTLP JSON body is not JSON: {exc}") from None
    else:
        try:
            data = json_format.MessageToDict(ExportTraceServiceRequest.FromString(body))
        except DecodeError as exc:
            raise ValueError(f"the OTLP body is not an ExportTraceServiceRequest: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError("the OTLP body is not an object")
    spans = [
        span
        for resource in data.get("resourceSpans") or []
        for scope in resource.get("scopeSpans") or []
        for span in scope.get("spans") or []
        if isinstance(span, dict)
    ]
    return sorted(spans, key=lambda s: int(s.get("startTimeUnixNano") or 0))


def attributes(span: dict[str, Any]) -> dict[str, Any]:
    """A span's attributes as plain values (strings, numbers, booleans; arrays and maps as JSON text)."""
    return {item["key"]: _value(item.get("value") or {}) for item in span.get("attributes") or [] if "key" in item}


def _value(value: dict[str, Any]) -> Any:
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return int(value["intValue"])
    return json.dumps(value.get("arrayValue") or value.get("kvlistValue") or value)


def tool_args(arguments: Any) -> list[str]:
    """A tool call's arguments as an action's: the values of a JSON object in order (``{"url": U}`` -> ``[U]``, as
    the action grammar writes ``goto [U]``), else the text whole."""
    if arguments in (None, ""):
        return []
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
    except json.JSONDecodeError:
        return [str(arguments)]
    if isinstance(parsed, dict):
        return [v if isinstance(v, str) else json.dumps(v) for v in parsed.values()]
    return [str(arguments)]


class SpanSink:
    """Takes one episode's span exports; ``on_first_action`` is called once, at its first action span."""

    def __init__(self, episode: EpisodeRecorder, on_first_action: Callable[[], None]) -> None:
        self.episode = episode
        self._on_first = on_first_action
        self.actions = 0

    async def take(self, body: bytes, content_type: str) -> int:
        """Record the action spans of one export; how many there were."""
        taken = 0
        for span, found in self._actions(spans_of(body, content_type)):
            if self.actions == 0:
                self._on_first()
            self.actions, taken = self.actions + 1, taken + 1
            rationale = next((found[k] for k in RATIONALE_KEYS if isinstance(found.get(k), str)), None)
            if rationale:
                await self.episode.rationale(rationale)
            name = str(found.get("gen_ai.tool.name") or span.get("name") or "tool")
            args = tool_args(found.get("gen_ai.tool.call.arguments"))
            status = span.get("status") or {}
            failed = status.get("code") in _ERROR_STATUS
            await self.episode.action(
                ParsedAction(name=name, args=args).render(),
                ParsedAction(name=name, args=args),
                status="invalid" if failed else "executed",
                error=(status.get("message") or "the tool span ended in error") if failed else None,
            )
        return taken

    @staticmethod
    def _actions(spans: list[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
        for span in spans:
            found = attributes(span)
            if found.get("gen_ai.operation.name") == TOOL_OPERATION:
                yield span, found
