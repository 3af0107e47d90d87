"""The run's model and scheme where a runner's folder states them exactly: Browser-Use's ``_summary.json``.

File names hold only a squeezed model tag (``gpt41``); the summary names the model the runner was given, its
provider and experiment, and each task's own success flag.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PureWindowsPath
from typing import Any

from p2w_rt.schemas import Scheme
from p2w_runtime.importers import _browser_use
from p2w_runtime.importers._errors import TrajectoryImportError
from p2w_runtime.importers._formats import ImportFormat
from p2w_runtime.importers._layout import Layout
from p2w_runtime.importers._read import read_json


@dataclass
class RunModel:
    """The run's backbone model and the tag its file names must carry (None: not known yet)."""

    name: str | None = None
    tag: str | None = None
    given: bool = False
    """``--model`` was given: it overrides whatever files and names say."""


def summary_model(
    reader: ImportFormat, layout: Layout, bad: list[TrajectoryImportError], self_reported: dict[str, bool | None]
) -> tuple[RunModel, Scheme | None, dict[str, Any]]:
    """Model and scheme from ``_summary.json`` (exact, where file names hold only a squeezed tag); each task's own
    success flag into ``self_reported``; a bad summary into ``bad``."""
    records: list[tuple[Path, _browser_use.SummaryRecord]] = []
    for path in layout.summaries:
        try:
            records += [(path, r) for r in _browser_use.parse_summary(path, read_json(path))]
        except TrajectoryImportError as exc:
            bad.append(exc)
    ran = [(path, r) for path, r in records if r.error is None]
    # ``str(task_path)`` on the machine that ran: a Windows path names the same task wherever it is imported
    self_reported.update({PureWindowsPath(r.task_file).stem: r.success for _, r in ran})
    if not ran:
        return RunModel(), None, {}
    first_path, first = ran[0]
    for path, r in ran[1:]:
        if (r.model, r.scheme) != (first.model, first.scheme):
            bad.append(
                TrajectoryImportError(
                    path,
                    "model",
                    f"{r.model!r} ({r.scheme}) differs from {first.model!r} ({first.scheme}) in {first_path}",
                )
            )
            return RunModel(), None, {}
    raw = first.model or ""
    name = raw or f"{first.provider or 'browser-use'} default model"
    where = f"{first_path.parent.name}/{first_path.name}"  # names, never the machine's path
    meta = {"summary": where, "experiment_id": first.experiment_id, "provider": first.provider}
    return RunModel(name=name, tag=reader.squeeze(raw)), first.scheme, meta
