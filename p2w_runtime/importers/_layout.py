"""Which files of a runner's output folder are what: trajectories, crash records, the run summary.

AgentOccam writes ``{logdir}/{logname}/`` with one trajectory per task, trajectories whose
last action is a CAPTCHA stop moved into ``captcha_stopped/``, plus its config copy (``*.yml``:
``max_steps``, ``env.task_ids``) and ``summary.csv`` (each task's final ``num_actions``), both read by
``_agentoccam_log``. Browser-Use writes ``result/{config}/`` with one
trajectory per finished task, ``{task}.error.json`` per crashed task and ``_summary.json``.
Files given one by one are classified by the same names, so a folder and its files import alike.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from p2w_runtime.importers._errors import TrajectoryImportError
from p2w_runtime.importers._naming import crash_task_id

CAPTCHA_FOLDER = "captcha_stopped"
SUMMARY_NAME = "_summary.json"
CSV_SUMMARY_NAME = "summary.csv"
CONFIG_SUFFIXES = (".yml", ".yaml")


@dataclass(frozen=True, slots=True)
class Trajectory:
    path: Path
    captcha: bool
    """In AgentOccam's ``captcha_stopped/``: the runner filed it as stopped by a CAPTCHA."""


@dataclass
class Layout:
    trajectories: list[Trajectory] = field(default_factory=list)
    crashes: list[Path] = field(default_factory=list)
    summaries: list[Path] = field(default_factory=list)
    runner_configs: list[Path] = field(default_factory=list)
    """AgentOccam's config copies (``{config name}.yml``) in the folders given."""
    csv_summaries: list[Path] = field(default_factory=list)
    """AgentOccam's ``summary.csv`` in the folders given."""


def _files(path: Path) -> list[Path]:
    if not path.is_dir():
        if path.exists() and not path.is_file():  # a FIFO: opening it would wait for a writer forever
            raise TrajectoryImportError(path, None, "not a regular file or a folder")
        return [path]
    files = sorted(p for p in path.glob("*.json") if p.is_file())
    captcha = path / CAPTCHA_FOLDER
    return files + sorted(p for p in captcha.glob("*.json") if p.is_file()) if captcha.is_dir() else files


def collect(paths: Iterable[Path]) -> Layout:
    """Files as given; a folder stands for its ``*.json`` files and those of its ``captcha_stopped/``."""
    layout = Layout()
    for path in map(Path, paths):
        if path.is_dir():
            layout.runner_configs += sorted(p for p in path.iterdir() if p.suffix in CONFIG_SUFFIXES and p.is_file())
            if (path / CSV_SUMMARY_NAME).is_file():
                layout.csv_summaries.append(path / CSV_SUMMARY_NAME)
        for file in _files(path):
            if file.name == SUMMARY_NAME:
                layout.summaries.append(file)
            elif crash_task_id(file) is not None:
                layout.crashes.append(file)
            else:
                layout.trajectories.append(Trajectory(file, captcha=file.parent.name == CAPTCHA_FOLDER))
    return layout
