"""Persona2Web task files and task sets.

Layout of the published benchmark: ``personalization_{1,2,3}/{First}_{Last}_{Set}{n}.json``
where folder ``n`` holds ambiguity level ``3 - n`` (folder 1 = level 2, the most ambiguous).
The three levels of one request form a query set (``Alex_Garcia_A``); its level-0 member
is the answer key of the other two.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from p2w_rt.schemas import GroundTruth, TaskFile, content_hash
from p2w_runtime.data._errors import DataError
from p2w_runtime.data._ground_truth import ground_truth
from p2w_runtime.data._memory_bank import decode_json, read_json, validated

LEVEL_FOLDERS = {"personalization_1": 2, "personalization_2": 1, "personalization_3": 0}
_TASK_ID = re.compile(r"^(?P<persona>.+)_(?P<set>[A-Za-z]+)(?P<n>[1-3])$")
_QUERY_PREFIX = "Query: "


class Task(BaseModel):
    """One task file, with the identity and answer key the benchmark derives from it."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    task_id: str
    persona: str
    query_set: str
    level: int
    intent: str
    start_url: str
    file: TaskFile
    path: Path | None = None
    ground_truth: GroundTruth | None = None


def load_task(path: Path, *, level: int | None = None) -> Task:
    """Load one task file; the level comes from its folder when given, else from the id's digit.

    A level-0 task carries its own ground truth; levels 1 and 2 get theirs from ``load_tasks``.
    """
    path = Path(path)
    return parse_task(read_json(path), path, level=level)


def parse_task(data: Any, path: Path, *, level: int | None = None) -> Task:
    """A parsed task file as a ``Task``; ``path`` names it in errors (on disk, or inside a run's task folder)."""
    if not isinstance(data, dict):
        raise DataError(f"{path}: expected a JSON object, got {type(data).__name__}")
    file = validated(TaskFile, data, str(path))
    match = _TASK_ID.match(file.task_id)
    if match is None:
        raise DataError(f"{path}: field task_id {file.task_id!r} is not of the form First_Last_{{Set}}{{1-3}}")
    id_level = 3 - int(match["n"])
    if level is not None and level != id_level:
        raise DataError(f"{path}: field task_id {file.task_id!r} is level {id_level}, its folder holds level {level}")
    intent = file.intent.removeprefix(_QUERY_PREFIX)
    truth = None
    if id_level == 0:
        try:
            truth = ground_truth(intent)
        except DataError as exc:
            raise DataError(f"{path}: field intent: {exc}") from None
    return Task(
        task_id=file.task_id,
        persona=match["persona"],
        query_set=file.task_id[:-1],
        level=id_level,
        intent=intent,
        start_url=file.start_url,
        file=file,
        path=path,
        ground_truth=truth,
    )


@dataclass(frozen=True)
class TaskSet:
    """The tasks of one dataset directory, by task id, with ground truth attached."""

    root: Path
    tasks: dict[str, Task] = field(repr=False)

    def __len__(self) -> int:
        return len(self.tasks)

    def __iter__(self) -> Iterator[Task]:
        return iter(self.tasks.values())

    def __contains__(self, task_id: object) -> bool:
        return task_id in self.tasks

    def get(self, task_id: str) -> Task:
        """The task with this id; ``DataError`` naming the directory when it is unknown."""
        try:
            return self.tasks[task_id]
        except KeyError:
            raise DataError(f"unknown task id {task_id!r} ({len(self.tasks)} tasks in {self.root})") from None

    @cached_property
    def query_sets(self) -> dict[str, list[Task]]:
        """Tasks grouped by query set, each group ordered level 0 first."""
        groups: dict[str, list[Task]] = {}
        for task in self.tasks.values():
            groups.setdefault(task.query_set, []).append(task)
        return {name: sorted(group, key=lambda t: t.level) for name, group in sorted(groups.items())}

    @cached_property
    def ground_truths(self) -> dict[str, GroundTruth]:
        """Ground truth per query set (only sets whose level-0 task is present)."""
        return {t.query_set: t.ground_truth for t in self.tasks.values() if t.level == 0 and t.ground_truth}

    @cached_property
    def content_hash(self) -> str:
        """sha256 over every task file's content and level; file layout and whitespace do not count."""
        body = [{"level": t.level, "task": t.file.model_dump(mode="json")} for _, t in sorted(self.tasks.items())]
        return content_hash(body)

    @property
    def dataset_id(self) -> str:
        """A short name that differs whenever the content does (paths differ between machines, content does not)."""
        return f"persona2web@{self.content_hash[:12]}"


def _task_files(root: Path) -> list[tuple[Path, int | None]]:
    folders = [(root / name, level) for name, level in LEVEL_FOLDERS.items() if (root / name).is_dir()]
    if folders:
        return [(path, level) for folder, level in folders for path in sorted(folder.glob("*.json"))]
    return [(path, None) for path in sorted(root.glob("*.json"))]


def load_tasks(root: Path) -> TaskSet:
    """Load ``personalization_{1,2,3}/`` under ``root``, or a flat folder of task files."""
    root = Path(root)
    if not root.is_dir():
        raise DataError(f"{root}: tasks directory not found")
    loaded = [load_task(path, level=level) for path, level in _task_files(root)]
    if not loaded:
        raise DataError(f"{root}: no task files (expected personalization_{{1,2,3}}/*.json or *.json)")
    return task_set(root, loaded)


def tasks_from_files(root: Path, files: Mapping[str, bytes]) -> TaskSet:
    """The tasks of ``files`` (path inside the task folder -> bytes, as a run carries them), the level of each
    from its folder as ``load_tasks`` reads it; ``root`` names the set in errors."""
    loaded = []
    for name, data in sorted(files.items()):
        path = root / name
        loaded.append(parse_task(decode_json(data, path), path, level=LEVEL_FOLDERS.get(Path(name).parent.name)))
    return task_set(root, loaded)


def task_set(root: Path, loaded: list[Task]) -> TaskSet:
    """Tasks by id, levels 1 and 2 given the ground truth of their query set's level-0 task."""
    tasks: dict[str, Task] = {}
    for task in loaded:
        if task.task_id in tasks:
            raise DataError(f"{task.path}: field task_id {task.task_id!r} duplicates {tasks[task.task_id].path}")
        tasks[task.task_id] = task
    truths = {t.query_set: t.ground_truth for t in tasks.values() if t.level == 0}
    linked = {
        task_id: task if task.level == 0 else task.model_copy(update={"ground_truth": truths.get(task.query_set)})
        for task_id, task in tasks.items()
    }
    return TaskSet(root=root, tasks=linked)
