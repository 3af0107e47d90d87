"""What an export wrote, in the words of its format: the ``--json`` object and the line for people.

Keyed by the format's name (``replay.exports.EXPORT_FORMATS``), so that reporting one format imports no other's
code (the Parquet summary's module loads pyarrow).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from p2w_rt.replay.otel import OtelSummary
    from p2w_rt.replay.parquet import ParquetSummary
    from p2w_runtime.store import BundleSummary

Report = tuple[dict[str, Any], str]


def _bundle(summary: object, output: Path | None) -> Report:
    s = cast("BundleSummary", summary)
    # what export did: no inserted / trusted, which say what an import did
    written = {"run_id": s.run_id, "label": s.label, "events": s.events, "blobs": s.blobs}
    signed = f", signed by {s.signed_by}" if s.signed_by else ""
    line = f"exported {s.label} ({s.run_id}): {s.events} events, {s.blobs} blobs -> {output}{signed}"
    return {**written, "signed_by": s.signed_by, "path": str(output)}, line


def _parquet(summary: object, output: Path | None) -> Report:
    s = cast("ParquetSummary", summary)
    tables = ", ".join(f"{name} {n}" for name, n in s.rows.items())
    line = f"exported {s.runs} run(s) as Parquet to {s.folder}: {tables} rows"
    return {"folder": str(s.folder), "runs": s.runs, "rows": s.rows}, line


def _otel(summary: object, output: Path | None) -> Report:
    s = cast("OtelSummary", summary)
    named = [{"run_id": r.run_id, "label": r.label} for r in s.runs]
    where = {"path": str(s.path) if s.path is not None else None, "endpoint": s.endpoint}
    names = ", ".join(f"{r.label} ({r.run_id})" for r in s.runs)
    to = " and ".join(str(w) for w in (s.path, s.endpoint) if w is not None)
    notes = f", {s.annotations} annotations" if s.annotations is not None else ""
    line = f"exported {names} as OpenTelemetry: {s.traces} traces, {s.spans} spans{notes} -> {to}"
    counts = {"traces": s.traces, "spans": s.spans, "annotations": s.annotations or 0}
    return {"runs": named, **counts, **where}, line


REPORTS: dict[str, Callable[[object, Path | None], Report]] = {
    "bundle": _bundle,
    "parquet": _parquet,
    "otel": _otel,
}
"""The report of each export format (``tests/replay/test_export_formats.py``: one per format of the table)."""


def export_report(fmt: str, summary: object, output: Path | None) -> Report:
    """The ``--json`` object and the line of ``summary``, written by format ``fmt`` to ``output``."""
    return REPORTS[fmt](summary, output)
