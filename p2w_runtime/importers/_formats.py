"""The import formats ``import-trajectories --format`` takes: the Persona2Web runners' and any plugin's.

A format is a reader of one file, in four steps the importer drives: ``parse`` (the file's JSON -> the format's
model, ``TrajectoryImportError`` naming the field when it is not one), ``header`` (its task id and model),
``objective`` and ``emit`` (its events, through an ``ImportedEpisode``, the same builder the built-in readers
drive). Everything else an import does (checking every file before writing, resuming, the run's lifecycle) is
the importer's, so a plugin's format gets it unchanged. Plugins register theirs with ``register_format`` from an
installed package's entry point (``p2w_runtime.installed_plugins``); this module never imports ``replay``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from p2w_runtime.errors import UserError
from p2w_runtime.importers import _agentoccam, _browser_use
from p2w_runtime.importers._agentoccam_log import RunnerLog
from p2w_runtime.importers._episode import Header, ImportedEpisode
from p2w_runtime.importers._naming import FileName
from p2w_runtime.registry import Registry


class Emit(Protocol):
    """Writes one parsed file's events: ``phase`` is the scheme's memory phase (``on-demand``, ``pre-execution``),
    ``captcha`` that the runner filed it as stopped by a captcha, ``runner`` what its output folder says."""

    def __call__(
        self, data: Any, builder: ImportedEpisode, /, *, phase: str, captcha: bool, runner: RunnerLog | None = None
    ) -> None: ...


def _no_objective(_data: Any) -> str | None:
    return None


def _unchanged(model: str) -> str:
    return model


@dataclass(frozen=True, slots=True)
class ImportFormat:
    """One ``--format``: its name and help line, the agent its runs are recorded as, and its reader."""

    name: str
    help: str
    agent: str
    parse: Callable[[Path, Any], Any]
    header: Callable[[Path, Any, FileName], Header]
    """Task id and model of a parsed file; ``FileName`` is what its name says (``{scheme}_{model tag}_{task}``)."""
    emit: Emit
    objective: Callable[[Any], str | None] = _no_objective
    """The agent's whole instruction as the file records it, for ``episode.started``."""
    squeeze: Callable[[str], str] = _unchanged
    """How the runner turns a model name into the tag of its file names."""


class UnknownImportFormat(UserError):
    """``--format`` names no built-in or installed format."""

    exit_code = 2


FORMATS = Registry[ImportFormat]("trajectory format", flag="--format", unknown=UnknownImportFormat)
register_format = FORMATS.register
"""Add an import format (a plugin's, from its entry point); a name already taken is an error."""
import_formats = FORMATS.all
"""Every format by name: the built-in ones, then installed plugins' (loaded on this first lookup)."""
import_format = FORMATS.get
"""The format called ``name``; ``UnknownImportFormat`` naming the known ones otherwise."""

AGENTOCCAM = register_format(
    ImportFormat(
        _agentoccam.FORMAT,
        "Persona2Web's AgentOccam runner: one JSON file per task",
        _agentoccam.AGENT,
        _agentoccam.parse,
        _agentoccam.header,
        _agentoccam.emit,
        _agentoccam.objective,
        _agentoccam.squeeze,
    )
)
BROWSER_USE = register_format(
    ImportFormat(
        _browser_use.FORMAT,
        "Persona2Web's Browser-Use runner: one JSON list of steps per task, crash records, _summary.json",
        _browser_use.AGENT,
        _browser_use.parse,
        _browser_use.header,
        _browser_use.emit,
        _browser_use.objective,
        _browser_use.squeeze,
    )
)
