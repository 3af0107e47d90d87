"""What the OpenTelemetry export tests share: the command in process, the judged example runs they export (made
once per test session), and sending a line to a receiver."""

from __future__ import annotations

import shutil
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from p2w_rt.cli import main
from p2w_runtime.demo.examples import example_run_bundles


def p2w(db: Path, *args: str) -> Result:
    """``p2w-rt --db DB ARGS`` as a user sees it: an exception the command lets out is its result, not the test's."""
    return CliRunner().invoke(main, ["--db", str(db), *args])


def ok(db: Path, *args: str) -> str:
    """``p2w-rt --db DB ARGS``, which must succeed: its output."""
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def judged_examples(base: Path) -> Path:
    """The bundled example runs imported, ``earlier`` judged with rubric-rules and classified, under ``base``: made
    once per test session (both OTel test modules export it), again only if an earlier attempt did not finish."""
    folder = base / "otel-examples"
    db = folder / "runs.db"
    if not (folder / "done").exists():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        for bundle in example_run_bundles():
            ok(db, "import", str(bundle))
        ok(db, "replay", "earlier", "--judge", "rubric-rules")
        ok(db, "classify", "earlier")
        (folder / "done").touch()
    return db


def send(url: str, body: bytes, content_type: str = "application/json") -> int:
    """POST ``body`` to a receiver: the HTTP status it answered."""
    request = urllib.request.Request(url, data=body, headers={"Content-Type": content_type}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as refused:
        return refused.code


def spans_of(request: ExportTraceServiceRequest) -> list[tuple[Any, Span]]:
    """Every span of an export request, with its resource."""
    return [(rs.resource, s) for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
