"""`p2w-rt export RUN --format otel`: what the spans say. A recorded run sent to a real OTLP/HTTP receiver on
127.0.0.1 comes back as one trace per episode, its steps, LLM calls, history accesses and judgments where the log
says they were; every ``gen_ai.*`` name is one of opentelemetry-semantic-conventions'; retrieved documents and
OpenInference kinds, ``error.type``, redacted secrets, and judgments as Phoenix annotations.

The run is a bundled example run (recorded by the own agent against the demo sites, with a scripted model),
judged with the rules rubric and classified first (``otel_db``). The receiver decodes into opentelemetry-proto's
messages (tests/helpers/otlp_receiver.py).
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import opentelemetry.semconv._incubating.attributes.gen_ai_attributes as gen_ai
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from p2w_rt.replay.judges import current_judgments
from p2w_rt.replay.otel import error_type, nanos
from p2w_rt.schemas import HistoryQuery, LlmCall
from p2w_runtime.domain import episodes_of, find_run
from p2w_runtime.domain.trajectory import load_trajectories
from p2w_runtime.store import open_store
from p2w_runtime.testing.episodes import EpisodeBuilder
from tests.helpers.classify_builders import add_run
from tests.helpers.otel_support import ok, p2w, send, spans_of
from tests.helpers.otlp_receiver import OtlpReceiver, decode_otlp_json

SEMCONV_GEN_AI = {v for k, v in vars(gen_ai).items() if k.startswith("GEN_AI_") and isinstance(v, str)}
OPERATIONS = {member.value for member in gen_ai.GenAiOperationNameValues}


def attrs(holder: Any) -> dict[str, Any]:
    """A span's (or event's) attributes as Python values."""
    return {a.key: _python(a.value) for a in holder.attributes}


def _python(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_python(v) for v in value.array_value.values]
    return getattr(value, kind)


async def _recorded(db: Path) -> dict[str, Any]:
    """What the log says, for the counted episodes of ``earlier``: LLM calls, history queries, steps, judgments."""
    async with open_store(db) as store:
        run = await find_run(store, "earlier")
        streams = [ref.stream for ref in await episodes_of(store, run.run_id)]
        calls: dict[str, tuple[LlmCall, str]] = {}
        queries: list[HistoryQuery] = []
        async for stored in store.read_streams(streams):
            payload = stored.decode_payload()
            if isinstance(payload, LlmCall):
                calls[stored.event_id] = (payload, stored.recorded_at)
            elif isinstance(payload, HistoryQuery):
                queries.append(payload)
        steps = {t.stream: len(t.steps) async for t in load_trajectories(store, run.run_id)}
        judged = {stream: r.judgment.metrics for (stream, _), r in (await current_judgments(store, run.run_id)).items()}
    return {"run_id": run.run_id, "streams": streams, "calls": calls, "queries": queries, "steps": steps,
            "judged": judged}  # fmt: skip


def test_the_run_comes_back_from_a_receiver_as_a_trace_per_episode_with_what_the_log_holds(
    otel_db: Path, otel_jsonl: Path
) -> None:
    recorded = asyncio.run(_recorded(otel_db))
    with OtlpReceiver() as receiver:
        for line in otel_jsonl.read_bytes().splitlines():
            assert send(receiver.url, line) == 200, receiver.refused
    traces: dict[bytes, list[Span]] = defaultdict(list)
    for resource, span in receiver.spans():
        assert resource["service.name"] == "p2w-rt" and resource["p2w.run.id"] == recorded["run_id"]
        traces[span.trace_id].append(span)
    assert len(traces) == len(recorded["streams"]) == 24
    all_ids = [span.span_id for spans in traces.values() for span in spans]
    assert len(set(all_ids)) == len(all_ids) and all(len(i) == 8 for i in all_ids)

    chats: dict[str, Span] = {}
    for spans in traces.values():
        by_id = {span.span_id: span for span in spans}
        (root,) = [span for span in spans if not span.parent_span_id]
        root_attrs = attrs(root)
        stream = root_attrs["p2w.episode.stream"]
        assert root.name == "invoke_agent p2w-rt" and root_attrs["gen_ai.operation.name"] == "invoke_agent"
        for span in spans:  # a tree under the root, each span inside its parent's time
            if span is not root:
                parent = by_id[span.parent_span_id]
                assert parent.start_time_unix_nano <= span.start_time_unix_nano <= span.end_time_unix_nano
                assert span.end_time_unix_nano <= parent.end_time_unix_nano
        steps = [span for span in spans if span.name.startswith("step ")]
        assert len(steps) == recorded["steps"][stream] and all(s.parent_span_id == root.span_id for s in steps)
        for span in spans:
            if span.name.startswith("chat "):
                chats[attrs(span)["p2w.llm.fingerprint"] + stream + str(span.end_time_unix_nano)] = span
            if span.name == "history.query":
                (retrieval,) = [s for s in spans if s.parent_span_id == span.span_id and s.name.startswith("retrieval")]
                assert attrs(retrieval)["gen_ai.retrieval.query.text"] == attrs(span)["p2w.history.query"]
                assert attrs(retrieval)["gen_ai.operation.name"] == "retrieval"
                assert by_id[span.parent_span_id].name == "execute_tool memory_access"
        evaluations = {
            attrs(e)["gen_ai.evaluation.name"]: attrs(e)["gen_ai.evaluation.score.value"]
            for e in root.events
            if e.name == "gen_ai.evaluation.result"
        }
        assert evaluations == {f"rubric-rules.{m}": v for m, v in recorded["judged"][stream].items()}
        assert [attrs(e)["p2w.classifier.id"] for e in root.events if e.name == "p2w.error.classified"] == ["rules"]
        assert root_attrs["gen_ai.usage.input_tokens"] == sum(
            attrs(s).get("gen_ai.usage.input_tokens", 0) for s in spans if s.name.startswith("chat ")
        )

    # every recorded LLM call is one CLIENT span, timed by its event: it ended when recorded, took its latency
    assert len(chats) == len(recorded["calls"]) > 0
    ends = sorted(nanos(at) for _, at in recorded["calls"].values())
    assert sorted(span.end_time_unix_nano for span in chats.values()) == ends
    for span in chats.values():
        a = attrs(span)
        call = next(c for c, at in recorded["calls"].values() if nanos(at) == span.end_time_unix_nano)
        assert span.kind == Span.SPAN_KIND_CLIENT and a["gen_ai.provider.name"] == "openai"
        assert a["gen_ai.request.model"] == call.model == "scripted-gpt"
        assert call.usage is not None and a["gen_ai.usage.input_tokens"] == call.usage.prompt_tokens
        assert a["gen_ai.usage.output_tokens"] == call.usage.completion_tokens
        assert span.end_time_unix_nano - span.start_time_unix_nano == round(call.latency_s * 1e9)
        assert json.loads(a["gen_ai.output.messages"])[0]["parts"][0]["content"] == call.response
        assert [m["role"] for m in json.loads(a["gen_ai.input.messages"])] == [m["role"] for m in call.messages]
    assert sum(len([s for s in spans if s.name == "history.query"]) for spans in traces.values()) == len(
        recorded["queries"]
    )


def test_every_gen_ai_name_is_one_of_the_semantic_conventions(otel_jsonl: Path) -> None:
    keys: set[str] = set()
    operations: set[str] = set()
    for line in otel_jsonl.read_bytes().splitlines():
        for _, span in spans_of(decode_otlp_json(line)):
            a = attrs(span)
            keys |= set(a) | {k for e in span.events for k in attrs(e)}
            operations.add(a.get("gen_ai.operation.name", "invoke_agent"))
    used = {k for k in keys if k.startswith("gen_ai.")}
    assert used - SEMCONV_GEN_AI == set()
    assert {"gen_ai.provider.name", "gen_ai.usage.input_tokens", "gen_ai.evaluation.score.value"} <= used
    assert operations == {"invoke_agent", "chat", "execute_tool", "retrieval"} and operations <= OPERATIONS


def test_secrets_stay_redacted(tmp_path: Path) -> None:
    """A call whose prompt and error carried credentials is exported as the log holds it: redacted at append."""
    db = tmp_path / "runs.db"
    b = EpisodeBuilder("secret", "Lena_Fischer_A1", query="q", scheme=None, start_url="http://search.p2w.test/")
    b.observation(1, "http://search.p2w.test/")
    b.llm_call(
        LlmCall(
            role="planner",
            model="m",
            step=1,
            latency_s=0.1,
            fingerprint="f",
            ordinal=0,
            messages=[{"role": "user", "content": "use Authorization: Bearer sk-live-0123456789"}],
            response="see https://carol:hunter2-pass@host.test/x",
            error=None,
        )  # fmt: skip
    )
    b.action(1, "stop", "done")
    b.finish("answered", "done", steps=1)

    async def add() -> None:
        async with open_store(db) as store:
            await add_run(store, "secret", [b], run_id="secret")

    asyncio.run(add())
    out = tmp_path / "t.jsonl"
    ok(db, "export", "secret", "--format", "otel", "-o", str(out))
    text = out.read_text()
    assert "sk-live-0123456789" not in text and "hunter2-pass" not in text
    assert "Authorization: ***" in text and "https://***@host.test/x" in text


def test_retrieved_text_is_in_the_retrieval_document_fields_and_spans_have_their_openinference_kind(
    otel_jsonl: Path,
) -> None:
    kinds: dict[str, set[str]] = defaultdict(set)
    documents = 0
    for line in otel_jsonl.read_bytes().splitlines():
        for _, span in spans_of(decode_otlp_json(line)):
            a = attrs(span)
            kinds[span.name.split(" ")[0]].add(a["openinference.span.kind"])
            if span.name.startswith("retrieval "):
                entries = json.loads(a["p2w.retrieval.entries"])
                assert a["input.value"] == a["gen_ai.retrieval.query.text"]
                for i, entry in enumerate(entries):
                    assert a[f"retrieval.documents.{i}.document.content"] == f"{entry['type']}: {entry['object']}"
                    hit = json.loads(a["gen_ai.retrieval.documents"])[i]
                    assert a[f"retrieval.documents.{i}.document.id"] == hit["id"]
                    assert a[f"retrieval.documents.{i}.document.score"] == hit["score"]
                    documents += 1
            if span.name.startswith("chat ") and a.get("gen_ai.usage.input_tokens") is not None:
                assert a["llm.token_count.prompt"] == a["gen_ai.usage.input_tokens"]
    assert documents > 0
    assert dict(kinds) == {
        "invoke_agent": {"AGENT"},
        "step": {"CHAIN"},
        "chat": {"LLM"},
        "execute_tool": {"TOOL"},
        "history.query": {"CHAIN"},
        "retrieval": {"RETRIEVER"},
    }


def test_error_type_is_the_http_status_when_the_endpoint_answered_one() -> None:
    assert [
        error_type(message)
        for message in (
            "HTTP 429: rate limited",
            "HTTP 503: overloaded",
            "timeout after 60s",
            "connection error: [Errno 111] Connection refused",
            "bad response: no choices",
            "malformed output: no Action line",
            "KeyError: 'choices'",
        )
    ] == ["429", "503", "timeout", "connection_error", "malformed_output", "malformed_output", "_OTHER"]


def test_judgments_reach_phoenix_as_annotations_of_their_episode_span(otel_db: Path) -> None:
    with OtlpReceiver() as receiver:
        said = ok(
            otel_db, "export", "earlier", "--format", "otel", "--otlp-endpoint", receiver.url, "--phoenix-annotations"
        )
    assert "24 traces" in said and "120 annotations" in said
    roots = {
        span.span_id.hex(): attrs(span)["p2w.episode.stream"]
        for _, span in receiver.spans()
        if span.name.startswith("invoke_agent")
    }
    judged = asyncio.run(_recorded(otel_db))["judged"]
    got = {(roots[a["span_id"]], a["name"]): a["result"]["score"] for a in receiver.annotations}
    assert got == {
        (stream, f"rubric-rules.{metric}"): score
        for stream, metrics in judged.items()
        for metric, score in metrics.items()
    }
    assert {a["annotator_kind"] for a in receiver.annotations} == {"CODE"}
    alone = p2w(otel_db, "export", "earlier", "--format", "otel", "-o", "t.jsonl", "--phoenix-annotations")
    assert alone.exit_code == 2 and "goes with --otlp-endpoint" in alone.output
