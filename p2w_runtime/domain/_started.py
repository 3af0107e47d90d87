"""``episode.started``, built in one place from a task, and the run's ``Provenance`` that ``run.started`` states
(built by the run lifecycle, ``_lifecycle.py``): writers filling these payloads each their own way lost the
fields added to one (``source_file``, ``host``) in the others.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from p2w_rt.schemas import EpisodeStarted, ForkPoint, GroundTruth, Scheme
from p2w_runtime.provenance import code_version, git_sha, host, package_versions


class TaskLike(Protocol):
    """What ``episode.started`` records of a task (``p2w_runtime.data.Task``, or a sketch in a builder)."""

    @property
    def task_id(self) -> str: ...
    @property
    def persona(self) -> str: ...
    @property
    def query_set(self) -> str: ...
    @property
    def level(self) -> int | None: ...
    @property
    def intent(self) -> str: ...
    @property
    def start_url(self) -> str: ...
    @property
    def ground_truth(self) -> GroundTruth | None: ...


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a run's events came from, and which task set they measure."""

    dataset_id: str
    dataset_hash: str
    code_version: str
    git_sha: str | None = None
    packages: dict[str, str] = field(default_factory=dict)
    host: str = ""

    @classmethod
    def here(cls, dataset_id: str, dataset_hash: str) -> Provenance:
        """This checkout, this host, these packages: what a recorded or imported run states."""
        return cls(dataset_id, dataset_hash, code_version(), git_sha(), package_versions(), host())

    @classmethod
    def synthetic(cls, name: str) -> Provenance:
        """Hand-built runs (tests, benchmarks): no task files, no checkout to name."""
        return cls(name, "0" * 64, name)


def episode_started(
    task: TaskLike,
    *,
    episode_id: str,
    scheme: Scheme | None,
    source_file: Path | str | None = None,
    fork: ForkPoint | None = None,
    objective: str | None = None,
) -> EpisodeStarted:
    """The first event of an episode (attempt ``episode_id``) at ``task``; ``fork``: where it forked off;
    ``objective``: the instruction an imported runner recorded."""
    return EpisodeStarted(
        episode_id=episode_id,
        task_id=task.task_id,
        persona=task.persona,
        query_set=task.query_set,
        level=task.level,
        scheme=scheme,
        query=task.intent,
        start_url=task.start_url,
        ground_truth=task.ground_truth,
        source_file=Path(source_file).name if source_file is not None else None,
        fork=fork,
        objective=objective,
    )
