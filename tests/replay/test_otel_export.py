"""`p2w-rt export RUN --format otel` as a command: the file is OTLP a receiver takes (and a receiver refuses what is
not), a second export gives the same bytes and ``--no-content`` leaves the prompts out, two runs go to one file,
the protobuf file and a collector get the spans of the JSON file, and bad requests, a read-only folder and a
collector that refuses or is down are refused with a short message, writing nothing.

The run is a bundled example run, judged with the rules rubric and classified first (``otel_db``); the receiver is
a real OTLP/HTTP one on 127.0.0.1 (tests/helpers/otlp_receiver.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.helpers.otel_support import ok, p2w, send, spans_of
from tests.helpers.otlp_receiver import OtlpJsonError, OtlpReceiver, decode_otlp_json


def test_the_file_is_otlp_and_a_receiver_refuses_what_is_not(otel_jsonl: Path) -> None:
    lines = otel_jsonl.read_bytes().splitlines()
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


def test_exporting_twice_gives_the_same_bytes_and_without_content_no_prompt(otel_db: Path, otel_jsonl: Path) -> None:
    again = otel_jsonl.with_name("again.jsonl")
    ok(otel_db, "export", "earlier", "--format", "otel", "-o", str(again))
    assert again.read_bytes() == otel_jsonl.read_bytes()
    bare = otel_jsonl.with_name("bare.jsonl")
    ok(otel_db, "export", "earlier", "--format", "otel", "-o", str(bare), "--no-content")
    text = bare.read_text()
    for name in ("gen_ai.input.messages", "gen_ai.output.messages", "p2w.retrieval.entries"):
        assert name in otel_jsonl.read_text() and name not in text
    assert len(text) < len(otel_jsonl.read_text()) / 2
    assert [
        json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"] for line in text.splitlines()
    ] == [
        json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
        for line in otel_jsonl.read_text().splitlines()
    ]


def test_two_runs_go_to_one_file_each_episode_under_its_run(otel_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "both.jsonl"
    said = json.loads(ok(otel_db, "export", "earlier", "later", "--format", "otel", "-o", str(out), "--json"))
    assert [r["label"] for r in said["runs"]] == ["earlier", "later"] and said["traces"] == 48
    runs = [decode_otlp_json(line).resource_spans[0].resource for line in out.read_bytes().splitlines()]
    labels = [next(a.value.string_value for a in r.attributes if a.key == "p2w.run.label") for r in runs]
    assert labels == ["earlier"] * 24 + ["later"] * 24
    assert said["spans"] == sum(len(spans_of(decode_otlp_json(line))) for line in out.read_bytes().splitlines())


def test_bad_requests_are_refused_and_write_nothing(otel_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    unknown = p2w(otel_db, "export", "earlier", "nope", "--format", "otel", "-o", str(out))
    assert unknown.exit_code != 0 and "nope" in unknown.output and not out.exists()
    assert list(tmp_path.iterdir()) == []  # no partial file left behind either
    signed = p2w(otel_db, "export", "earlier", "--format", "otel", "-o", str(out), "--sign", str(tmp_path / "k.pem"))
    assert signed.exit_code == 2 and "--sign is for bundles" in signed.output
    content = p2w(otel_db, "export", "earlier", "-o", str(tmp_path / "b.p2w"), "--no-content")
    assert content.exit_code == 2 and "--no-content" in content.output
    folder = p2w(otel_db, "export", "earlier", "--format", "otel", "-o", str(tmp_path))
    assert folder.exit_code == 1 and "is a directory" in folder.output
    nowhere = p2w(otel_db, "export", "earlier", "--format", "otel", "-o", str(tmp_path / "no" / "t.jsonl"))
    assert nowhere.exit_code == 1 and "does not exist" in nowhere.output
    ok(otel_db, "export", "earlier", "--format", "otel", "-o", str(out))
    twice = p2w(otel_db, "export", "earlier", "--format", "otel", "-o", str(out))
    assert twice.exit_code == 1 and "--force" in twice.output
    out.write_text("old")
    ok(otel_db, "export", "earlier", "--format", "otel", "-o", str(out), "--force")
    assert out.read_text().count("\n") == 24


def test_a_read_only_folder_is_one_line_naming_the_file_and_leaves_nothing(otel_db: Path, tmp_path: Path) -> None:
    """Root writes through ``chmod``, so the folder is a read-only bind mount that only the command sees."""
    folder = tmp_path / "ro"
    folder.mkdir()
    out = folder / "t.jsonl"
    unshare = ["unshare", "-m", "--propagation", "private"] if os.geteuid() == 0 else ["unshare", "-rm"]
    script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
    p2w_rt = str(Path(sys.executable).with_name("p2w-rt"))
    command = [p2w_rt, "--db", str(otel_db), "export", "earlier", "--format", "otel", "-o", str(out)]
    done = subprocess.run([*unshare, "sh", "-c", script, "sh", str(folder), *command], capture_output=True, text=True)
    if done.stderr.startswith(("unshare:", "mount:")):
        pytest.skip(f"cannot make a private read-only mount here ({done.stderr.strip()[:200]})")
    assert (
        done.returncode == 1 and done.stderr == f"error: {out}: cannot write the trace file (Read-only file system)\n"
    )
    assert list(folder.iterdir()) == []


def test_protobuf_file_and_collector_get_the_spans_of_the_json_file(otel_db: Path, otel_jsonl: Path) -> None:
    from opentelemetry.proto.trace.v1.trace_pb2 import TracesData

    expected = [decode_otlp_json(line) for line in otel_jsonl.read_bytes().splitlines()]
    binary = otel_jsonl.with_name("earlier.pb")
    ok(otel_db, "export", "earlier", "--format", "otel", "--encoding", "protobuf", "-o", str(binary))
    whole = TracesData.FromString(binary.read_bytes())  # concatenated messages parse as one
    assert list(whole.resource_spans) == [rs for request in expected for rs in request.resource_spans]
    with OtlpReceiver() as receiver:
        base = receiver.url.removesuffix("/v1/traces")
        said = json.loads(ok(otel_db, "export", "earlier", "--format", "otel", "--otlp-endpoint", base, "--json"))
    assert said["traces"] == 24 and said["endpoint"] == receiver.url and said["path"] is None
    assert receiver.refused == [] and receiver.requests == expected


def test_a_collector_that_refuses_or_is_down_is_one_line(otel_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    with OtlpReceiver() as receiver:
        wrong = receiver.url.replace("/v1/traces", "/v1/logs")
        refused = p2w(otel_db, "export", "earlier", "--format", "otel", "-o", str(out), "--otlp-endpoint", wrong)
    assert refused.exit_code == 1 and not out.exists()
    said = '(HTTP 400: {"message": "no endpoint /v1/logs"}); 0 episode(s) had been sent'
    assert refused.output == f"error: {wrong} refused the traces {said}\n"
    down = p2w(otel_db, "export", "earlier", "--format", "otel", "--otlp-endpoint", receiver.url)  # closed now
    assert down.exit_code == 1 and len(down.output.splitlines()) == 1
    assert down.output.startswith(f"error: {receiver.url}: cannot reach the collector (")
    bad = p2w(otel_db, "export", "earlier", "--format", "otel", "--otlp-endpoint", "localhost:4318")
    assert bad.exit_code == 2 and "is not an http(s) URL" in bad.output
    neither = p2w(otel_db, "export", "earlier", "--format", "otel")
    assert neither.exit_code == 2 and "--otlp-endpoint" in neither.output
