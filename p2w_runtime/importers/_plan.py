"""An import's two passes over each file: checked, every file before anything is written (the task, the run's model
and scheme it agrees with), then its events rebuilt for appending."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from p2w_rt.schemas import NewEvent, Scheme
from p2w_runtime.data import DataError, Task, TaskSet
from p2w_runtime.domain import BadTaskId, EpisodeGrammarError, EpisodeWriter, check_task_id
from p2w_runtime.importers import _browser_use
from p2w_runtime.importers._agentoccam_log import RunnerLog
from p2w_runtime.importers._episode import Header, ImportedEpisode, MemoryBanks
from p2w_runtime.importers._errors import TrajectoryImportError
from p2w_runtime.importers._formats import ImportFormat
from p2w_runtime.importers._layout import Trajectory
from p2w_runtime.importers._naming import crash_task_id, parse_file_name
from p2w_runtime.importers._read import read_json
from p2w_runtime.importers._storable import check_storable
from p2w_runtime.importers._summary import RunModel


@dataclass(frozen=True, slots=True)
class Planned:
    path: Path
    task: Task
    scheme: Scheme | None
    crash: bool = False
    captcha: bool = False


def _phase(scheme: Scheme | None) -> str:
    return "pre-execution" if scheme == "pre-execution" else "on-demand"


class Planner:
    """Checks files one by one (pass 1) and rebuilds their events for appending (pass 2)."""

    def __init__(
        self, reader: ImportFormat, tasks: TaskSet, banks: MemoryBanks, run_id: str, done: set[str], model: RunModel
    ) -> None:
        self.reader, self.tasks, self.banks, self.run_id, self.done = reader, tasks, banks, run_id, done
        self.model = model
        self.seen: dict[str, Path] = {}
        self.trajectory_tasks: set[str] = set()
        """Tasks with a trajectory among the files: their crash records are superseded."""
        self.scheme: Scheme | None = None
        self.runner = RunnerLog()
        self.notes: dict[str, list[str]] = {}

    def build(self, item: Planned) -> list[NewEvent]:
        writer = EpisodeWriter.of(self.run_id, item.task.task_id)
        builder = ImportedEpisode(writer, path=item.path, persona=item.task.persona, banks=self.banks)
        try:
            if item.crash:
                builder.started(item.task, episode_id=item.task.task_id, scheme=item.scheme)
                _browser_use.emit_crash(_browser_use.parse_crash(item.path, read_json(item.path)), builder)
            else:
                data = self.reader.parse(item.path, read_json(item.path))
                goal = self.reader.objective(data)
                builder.started(item.task, episode_id=item.task.task_id, scheme=item.scheme, objective=goal)
                self.reader.emit(data, builder, phase=_phase(item.scheme), captcha=item.captcha, runner=self.runner)
        except EpisodeGrammarError as exc:  # the file's order is not an episode's: a bad file, like a bad field
            raise TrajectoryImportError(item.path, None, f"{exc.event_type} out of order: {exc.reason}") from None
        self.notes[item.task.task_id] = builder.notes
        return writer.take()[0]

    def _task(self, path: Path, task_id: str, where: str) -> Task:
        try:
            check_task_id(task_id, str(path))
        except BadTaskId as exc:
            raise TrajectoryImportError(path, where, exc.detail) from None
        if task_id in self.seen:
            raise TrajectoryImportError(path, where, f"task {task_id} is also in {self.seen[task_id]}")
        try:
            return self.tasks.get(task_id)
        except DataError as exc:
            raise TrajectoryImportError(path, where, str(exc)) from None

    def _check_model(self, path: Path, head: Header) -> RunModel:
        """The run's model once this file is in it; the first good file sets it unless known already."""
        model = self.model
        if model.given:
            return model
        if head.model is None or (head.model_is_tag and not head.model and model.name is None):
            raise TrajectoryImportError(path, "model", "not in the file or its name (empty tag); give --model")
        if model.name is None:
            return RunModel(head.model, head.model if head.model_is_tag else self.reader.squeeze(head.model))
        if head.model_is_tag and head.model != model.tag:
            raise TrajectoryImportError(
                path,
                "file name",
                f"model tag {head.model!r} differs from the run's model {model.name!r} (tag {model.tag!r})",
            )
        if not head.model_is_tag and head.model != model.name:
            raise TrajectoryImportError(path, "model", f"{head.model!r} differs from the run's model {model.name!r}")
        return model

    def check(self, source: Trajectory, *, scheme: Scheme | None) -> Planned | str:
        """The file's plan, or its task id when the run already holds it; ``TrajectoryImportError`` if bad."""
        path = source.path
        data = self.reader.parse(path, read_json(path))
        name = parse_file_name(path, self.tasks.tasks)
        head = self.reader.header(path, data, name)
        self.trajectory_tasks.add(head.task_id)
        if head.task_id in self.done:
            return head.task_id
        task = self._task(path, head.task_id, head.field)
        model = self._check_model(path, head)
        file_scheme = scheme or name.scheme
        if self.scheme is not None and file_scheme is not None and file_scheme != self.scheme:
            raise TrajectoryImportError(path, "scheme", f"{file_scheme} differs from the run's scheme {self.scheme}")
        planned = Planned(path, task, self.scheme or file_scheme, captcha=source.captcha)
        # a bad file (an index outside the bank, an event the store refuses) raises before it sets the run's model
        check_storable(path, self.build(planned))
        self.model, self.scheme, self.seen[task.task_id] = model, planned.scheme, path
        return planned

    def check_crash(self, path: Path) -> Planned | str | None:
        """A crash record's plan, its task id when the run holds it, None when a trajectory supersedes it.

        Call after every trajectory was checked. The runner never deletes a crash record: a later
        invocation that finished the task leaves both files behind, and the trajectory is the outcome.
        """
        task_id = crash_task_id(path)
        assert task_id is not None
        _browser_use.parse_crash(path, read_json(path))
        if task_id in self.trajectory_tasks:
            return None
        if task_id in self.done:
            return task_id
        task = self._task(path, task_id, "file name")
        planned = Planned(path, task, self.scheme, crash=True)
        check_storable(path, self.build(planned))
        self.seen[task.task_id] = path
        return planned
