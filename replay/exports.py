"""One export contract: every format is an exporter ``(store, runs, request) -> summary``, named in one table.

An exporter writes the runs it is given (found already: ``find_run``) to ``request.output``, whole or not at all, and
returns what it wrote as data; the command chooses the output, resolves the runs and reports the summary. The table
(``EXPORT_FORMATS``) names each exporter as ``module:NAME``, imported only when that format is used, so the command's
choices and help come from here without loading pyarrow, protobuf or zstandard (``tests/cli/test_startup_imports.py``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from pkgutil import resolve_name
from typing import TYPE_CHECKING, Protocol, cast

if TYPE_CHECKING:
    from p2w_runtime.domain import RunInfo
    from p2w_runtime.store import EventStore


@dataclass(frozen=True, slots=True)
class ExportRequest:
    """Where an export goes and the settings of every format; an exporter reads its own and ignores the rest."""

    output: Path | None
    """The file or folder to write; None only where a format has another destination (otel: ``endpoint``)."""
    force: bool = False
    """Replace an existing ``output``."""
    signing_key: Path | None = None
    """bundle: sign with this Ed25519 PEM private key."""
    content: bool = True
    """otel: include prompts, responses and retrieved entries."""
    protobuf: bool = False
    """otel: write the file in the OTLP protobuf encoding rather than JSON lines."""
    endpoint: str | None = None
    """otel: also send the traces to this OTLP/HTTP traces URL."""
    annotations: bool = False
    """otel: also send the judgments to ``endpoint``'s Arize Phoenix as span annotations."""
    progress: Callable[[int, int], None] | None = None
    """Called with (done, total) as the export goes, by the formats that can tell (bundle)."""


class Exporter(Protocol):
    def __call__(self, store: EventStore, runs: Sequence[RunInfo], request: ExportRequest) -> Awaitable[object]:
        """Write ``runs`` as ``request`` says, every check that can fail before writing first; return the format's
        summary of what was written (data: the command reports it)."""
        ...


@dataclass(frozen=True, slots=True)
class ExportFormat:
    name: str
    exporter: str
    """``module:NAME`` of its ``Exporter``, imported at first use."""
    help: str
    one_run: bool = False
    """The format holds a single run (a bundle)."""

    def load(self) -> Exporter:
        return cast("Exporter", resolve_name(self.exporter))


EXPORT_FORMATS = {
    f.name: f
    for f in (
        ExportFormat("bundle", "p2w_rt.replay.bundle:export_bundle_run", "one run, events + blobs, importable",
                     one_run=True),
        ExportFormat("parquet", "p2w_rt.replay.parquet:export_parquet",
                     "tables of every RUN for analysis (OUTPUT a folder)"),
        ExportFormat("otel", "p2w_rt.replay.otel:export_otel",
                     "every RUN as OpenTelemetry traces (OTLP JSON lines, GenAI conventions), a trace per episode"),
    )
}  # fmt: skip
"""Every export format by name, in the order ``export --format`` lists them (the first is the default)."""
