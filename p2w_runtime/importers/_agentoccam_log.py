"""What an AgentOccam output folder says beside its trajectories: the config copy and ``summary.csv``.

``agent_runner.py`` copies its config into ``{logdir}/{logname}/`` before the first task and appends one
``summary.csv`` row per task (``log_run``), so the folder tells what the trajectories alone do not:

- ``max_steps`` (top level; ``env.py`` counts every ``env.step``, memory notes included, and does not carry
  out the step past it: that step is logged with ``done: true`` but never executed);
- ``env.task_ids``: the tasks the run was given; a task without a file was not finished (the runner was
  killed, or it crashed), and its resume would write it later;
- ``num_actions`` of each task's last ``env.status()``: memory accesses after the last logged step show only
  there.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from p2w_runtime.importers._errors import TrajectoryImportError


@dataclass(frozen=True, slots=True)
class RunnerLog:
    """The run-level facts of the folders given; empty when only files were given."""

    max_steps: int | None = None
    task_ids: tuple[str, ...] = ()
    num_actions: Mapping[str, int] = field(default_factory=dict)
    """Task id -> ``num_actions`` of its ``summary.csv`` row (the last row wins: a resume appends)."""
    success: Mapping[str, bool | None] = field(default_factory=dict)
    """Task id -> the agent's own success flag, from Browser-Use's ``_summary.json`` (``history.is_successful()``)."""


def _config(path: Path) -> tuple[int | None, list[str]]:
    try:
        data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise TrajectoryImportError(
            path, None, f"not a readable YAML config copy: {str(exc).splitlines()[0]}"
        ) from None
    if not isinstance(data, dict):
        raise TrajectoryImportError(path, None, "the config copy is not a mapping")
    steps = data.get("max_steps")
    if steps is not None and (not isinstance(steps, int) or isinstance(steps, bool) or steps < 1):
        raise TrajectoryImportError(path, "max_steps", f"expected a positive integer, got {steps!r}")
    env = data.get("env") or {}
    ids = env.get("task_ids") if isinstance(env, dict) else None
    if ids is None or ids in ("all", ["all"]):  # "all": the runner lists its task folder, not recorded here
        return steps, []
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise TrajectoryImportError(path, "env.task_ids", f"expected a list of task ids, got {ids!r}")
    return steps, ids


def _summary(path: Path) -> dict[str, int]:
    try:
        with path.open(encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise TrajectoryImportError(path, None, f"not a readable summary.csv: {exc}") from None
    found: dict[str, int] = {}
    for n, row in enumerate(rows, start=2):
        task, raw = row.get("task_id"), row.get("num_actions")
        if not task or raw is None:
            raise TrajectoryImportError(path, f"line {n}", "a row without task_id or num_actions")
        if not raw.strip().isdigit():
            raise TrajectoryImportError(path, f"line {n}: num_actions", f"{raw!r} is not a count")
        found[task] = int(raw)
    return found


def read_runner_log(configs: Sequence[Path], summaries: Sequence[Path]) -> RunnerLog:
    """The config copies and summaries of the folders given; several folders must agree on ``max_steps``."""
    limits: dict[int, Path] = {}
    task_ids: list[str] = []
    for path in configs:
        steps, ids = _config(path)
        if steps is not None:
            limits.setdefault(steps, path)
        task_ids += [i for i in ids if i not in task_ids]
    if len(limits) > 1:
        (first, at), (other, there) = list(limits.items())[:2]
        raise TrajectoryImportError(there, "max_steps", f"{other} differs from {first} in {at}")
    num_actions: dict[str, int] = {}
    for path in summaries:
        num_actions.update(_summary(path))
    return RunnerLog(next(iter(limits), None), tuple(task_ids), num_actions)
