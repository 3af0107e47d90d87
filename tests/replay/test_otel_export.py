"""`p2w-rt export RUN --format otel`: a recorded run sent to a real OTLP/HTTP receiver on 127.0.0.1 comes back as
one trace per episode, its steps, LLM calls, history accesses and judgments where the log says they were.

The run is a bundled example run (recorded by the own agent against the demo sites, with a scripted model),
judged with the rules rubric and classified first. The receiver decodes into opentelemetry-proto's messages
(tests/helpers/otlp_receiver.py); the attribute names are checked against opentelemetry-semantic-conventions.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections import defaultdict
from pathlib import Path
from typing import Any

import opentelemetry.semconv._incubating.attributes.gen_ai_attributes as gen_ai
import pytest
from click.testing import CliRunner, Result
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from p2w_rt.cli import main
from p2w_rt.replay.judges import current_judgments
from p2w_rt.replay.otel import error_type, nanos
from p2w_rt.schemas import HistoryQuery, LlmCall
from p2w_runtime.demo.examples import example_run_bundles
from p2w_runtime.domain import episodes_of, find_run
from p2w_runtime.domain.trajectory import load_trajectories
from p2w_runtime.store import open_store
from p2w_runtime.testing.episodes import EpisodeBuilder
from tests.helpers.classify_builders import add_run
from tests.helpers.otlp_receiver import OtlpJsonError, OtlpReceiver, decode_otlp_json

SEMCONV_GEN_AI = {v for k, v in vars(gen_ai).items() if k.startswith("GEN_AI_") and isinstance(v, str)}
OPERATIONS = {member.value for member in gen_ai.GenAiOperationNameValues}


def p2w(db: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--db", str(db), *args])


def ok(db: Path, *args: str) -> str:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("otel") / "runs.db"
    for bundle in example_run_bundles():
        ok(path, "import", str(bundle))
    ok(path, "replay", "earlier", "--judge", "rubric-rules")
    ok(path, "classify", "earlier")
    return path


@pytest.fixture(scope="module")
def exported(db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("traces") / "earlier.jsonl"
    said = ok(db, "export", "earlier", "--format", "otel", "-o", str(out))
    assert "24 traces" in said and str(out) in said
    return out


def attrs(holder: Any) -> dict[str, Any]:
    """A span's (or event's) attributes as Python values."""
    return {a.key: _python(a.value) for a in holder.attributes}


def _python(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_python(v) for v in value.array_value.values]
    return getattr(value, kind)


def send(url: str, body: bytes, content_type: str = "application/json") -> int:
    request = urllib.request.Request(url, data=body, headers={"Content-Type": content_type}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as refused:
        return refused.code


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
    db: Path, exported: Path
) -> None:
    recorded = asyncio.run(_recorded(db))
    with OtlpReceiver() as receiver:
        for line in exported.read_bytes().splitlines():
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


def test_every_gen_ai_name_is_one_of_the_semantic_conventions(exported: Path) -> None:
    keys: set[str] = set()
    operations: set[str] = set()
    for line in exported.read_bytes().splitlines():
        for _, span in _spans(decode_otlp_json(line)):
            a = attrs(span)
            keys |= set(a) | {k for e in span.events for k in attrs(e)}
            operations.add(a.get("gen_ai.operation.name", "invoke_agent"))
    used = {k for k in keys if k.startswith("gen_ai.")}
    assert used - SEMCONV_GEN_AI == set()
    assert {"gen_ai.provider.name", "gen_ai.usage.input_tokens", "gen_ai.evaluation.score.value"} <= used
    assert operations == {"invoke_agent", "chat", "execute_tool", "retrieval"} and operations <= OPERATIONS


def _spans(request: ExportTraceServiceRequest) -> list[tuple[Any, Span]]:
    return [(rs.resource, s) for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]


def test_the_file_is_otlp_and_a_receiver_refuses_what_is_not(exported: Path) -> None:
    lines = exported.read_bytes().splitlines()
    first = decode_otlp_json(lines[0])
    binary = first.SerializeToString()  # the protobuf encoding of the same traces, bytes for bytes back
    assert ExportTraceServiceRequest.FromString(binary) == first
    with OtlpReceiver() as receiver:
        assert send(receiver.url, binary, "application/x-protobuf") == 200
        good = json.loads(lines[0])
        span = good["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
        for broken in (
            {**span, "traceId": span["traceId"][:-2]},  # a 15-byte trace id
            {**span, "spanId": "zz" * 8},  # not hex
            {**span, "kind": "SPAN_KIND_INTERNAL"},  # enums are integers in OTLP JSON
            {**span, "startTimeUnixNano": "soon"},
            {**span, "colour": "red"},  # no such field
            {**span, "attributes": [{"key": "k", "value": {"intValue": "1.5"}}]},
        ):
            bad = json.loads(lines[0])
            bad["resourceSpans"][0]["scopeSpans"][0]["spans"][0] = broken
            assert send(receiver.url, json.dumps(bad).encode()) == 400
        assert send(receiver.url, lines[0]) == 200
    assert len(receiver.requests) == 2 and receiver.requests[1] == first and len(receiver.refused) == 6
    with pytest.raises(OtlpJsonError):
        decode_otlp_json(b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "00"}]}]}]}')


def test_exporting_twice_gives_the_same_bytes_and_without_content_no_prompt(db: Path, exported: Path) -> None:
    again = exported.with_name("again.jsonl")
    ok(db, "export", "earlier", "--format", "otel", "-o", str(again))
    assert again.read_bytes() == exported.read_bytes()
    bare = exported.with_name("bare.jsonl")
    ok(db, "export", "earlier", "--format", "otel", "-o", str(bare), "--no-content")
    text = bare.read_text()
    for name in ("gen_ai.input.messages", "gen_ai.output.messages", "p2w.retrieval.entries"):
        assert name in exported.read_text() and name not in text
    assert len(text) < len(exported.read_text()) / 2
    assert [
        json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"] for line in text.splitlines()
    ] == [
        json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
        for line in exported.read_text().splitlines()
    ]


def test_two_runs_go_to_one_file_each_episode_under_its_run(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "both.jsonl"
    said = json.loads(ok(db, "export", "earlier", "later", "--format", "otel", "-o", str(out), "--json"))
    assert [r["label"] for r in said["runs"]] == ["earlier", "later"] and said["traces"] == 48
    runs = [decode_otlp_json(line).resource_spans[0].resource for line in out.read_bytes().splitlines()]
    labels = [next(a.value.string_value for a in r.attributes if a.key == "p2w.run.label") for r in runs]
    assert labels == ["earlier"] * 24 + ["later"] * 24
    assert said["spans"] == sum(len(_spans(decode_otlp_json(line))) for line in out.read_bytes().splitlines())


def test_bad_requests_are_refused_and_write_nothing(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    unknown = p2w(db, "export", "earlier", "nope", "--format", "otel", "-o", str(out))
    assert unknown.exit_code != 0 and "nope" in unknown.output and not out.exists()
    assert list(tmp_path.iterdir()) == []  # no partial file left behind either
    signed = p2w(db, "export", "earlier", "--format", "otel", "-o", str(out), "--sign", str(tmp_path / "k.pem"))
    assert signed.exit_code == 2 and "--sign is for bundles" in signed.output
    content = p2w(db, "export", "earlier", "-o", str(tmp_path / "b.p2w"), "--no-content")
    assert content.exit_code == 2 and "--no-content" in content.output
    folder = p2w(db, "export", "earlier", "--format", "otel", "-o", str(tmp_path))
    assert folder.exit_code == 1 and "is a directory" in folder.output
    nowhere = p2w(db, "export", "earlier", "--format", "otel", "-o", str(tmp_path / "no" / "t.jsonl"))
    assert nowhere.exit_code == 1 and "does not exist" in nowhere.output
    ok(db, "export", "earlier", "--format", "otel", "-o", str(out))
    twice = p2w(db, "export", "earlier", "--format", "otel", "-o", str(out))
    assert twice.exit_code == 1 and "--force" in twice.output
    out.write_text("old")
    ok(db, "export", "earlier", "--format", "otel", "-o", str(out), "--force")
    assert out.read_text().count("\n") == 24


def test_a_read_only_folder_is_one_line_naming_the_file_and_leaves_nothing(db: Path, tmp_path: Path) -> None:
    """Root writes through ``chmod``, so the folder is a read-only bind mount that only the command sees."""
    folder = tmp_path / "ro"
    folder.mkdir()
    out = folder / "t.jsonl"
    unshare = ["unshare", "-m", "--propagation", "private"] if os.geteuid() == 0 else ["unshare", "-rm"]
    script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
    p2w_rt = str(Path(sys.executable).with_name("p2w-rt"))
    command = [p2w_rt, "--db", str(db), "export", "earlier", "--format", "otel", "-o", str(out)]
    done = subprocess.run([*unshare, "sh", "-c", script, "sh", str(folder), *command], capture_output=True, text=True)
    if done.stderr.startswith(("unshare:", "mount:")):
        pytest.skip(f"cannot make a private read-only mount here ({done.stderr.strip()[:200]})")
    assert (
        done.returncode == 1 and done.stderr == f"error: {out}: cannot write the trace file (Read-only file system)\n"
    )
    assert list(folder.iterdir()) == []


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


def test_protobuf_file_and_collector_get_the_spans_of_the_json_file(db: Path, exported: Path) -> None:
    from opentelemetry.proto.trace.v1.trace_pb2 import TracesData

    expected = [decode_otlp_json(line) for line in exported.read_bytes().splitlines()]
    binary = exported.with_name("earlier.pb")
    ok(db, "export", "earlier", "--format", "otel", "--encoding", "protobuf", "-o", str(binary))
    whole = TracesData.FromString(binary.read_bytes())  # concatenated messages parse as one
    assert list(whole.resource_spans) == [rs for request in expected for rs in request.resource_spans]
    with OtlpReceiver() as receiver:
        base = receiver.url.removesuffix("/v1/traces")
        said = json.loads(ok(db, "export", "earlier", "--format", "otel", "--otlp-endpoint", base, "--json"))
    assert said["traces"] == 24 and said["endpoint"] == receiver.url and said["path"] is None
    assert receiver.refused == [] and receiver.requests == expected


def test_a_collector_that_refuses_or_is_down_is_one_line(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    with OtlpReceiver() as receiver:
        wrong = receiver.url.replace("/v1/traces", "/v1/logs")
        refused = p2w(db, "export", "earlier", "--format", "otel", "-o", str(out), "--otlp-endpoint", wrong)
    assert refused.exit_code == 1 and not out.exists()
    said = '(HTTP 400: {"message": "no endpoint /v1/logs"}); 0 episode(s) had been sent'
    assert refused.output == f"error: {wrong} refused the traces {said}\n"
    down = p2w(db, "export", "earlier", "--format", "otel", "--otlp-endpoint", receiver.url)  # closed now
    assert down.exit_code == 1 and len(down.output.splitlines()) == 1
    assert down.output.startswith(f"error: {receiver.url}: cannot reach the collector (")
    bad = p2w(db, "export", "earlier", "--format", "otel", "--otlp-endpoint", "localhost:4318")
    assert bad.exit_code == 2 and "is not an http(s) URL" in bad.output
    neither = p2w(db, "export", "earlier", "--format", "otel")
    assert neither.exit_code == 2 and "--otlp-endpoint" in neither.output


def test_retrieved_text_is_in_the_retrieval_document_fields_and_spans_have_their_openinference_kind(
    exported: Path,
) -> None:
    kinds: dict[str, set[str]] = defaultdict(set)
    documents = 0
    for line in exported.read_bytes().splitlines():
        for _, span in _spans(decode_otlp_json(line)):
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


def test_judgments_reach_phoenix_as_annotations_of_their_episode_span(db: Path) -> None:
    with OtlpReceiver() as receiver:
        said = ok(db, "export", "earlier", "--format", "otel", "--otlp-endpoint", receiver.url, "--phoenix-annotations")
    assert "24 traces" in said and "120 annotations" in said
    roots = {
        span.span_id.hex(): attrs(span)["p2w.episode.stream"]
        for _, span in receiver.spans()
        if span.name.startswith("invoke_agent")
    }
    judged = asyncio.run(_recorded(db))["judged"]
    got = {(roots[a["span_id"]], a["name"]): a["result"]["score"] for a in receiver.annotations}
    assert got == {
        (stream, f"rubric-rules.{metric}"): score
        for stream, metrics in judged.items()
        for metric, score in metrics.items()
    }
    assert {a["annotator_kind"] for a in receiver.annotations} == {"CODE"}
    alone = p2w(db, "export", "earlier", "--format", "otel", "-o", "t.jsonl", "--phoenix-annotations")
    assert alone.exit_code == 2 and "goes with --otlp-endpoint" in alone.output
