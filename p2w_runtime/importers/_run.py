"""``import_trajectories``: files written by the Persona2Web runners -> one run of episodes in the store.

Every file is validated before anything is written, so without ``skip_bad`` a bad file
leaves the store untouched. Each episode is then appended in one transaction, and a run
whose import was interrupted (no ``run.finished``) is continued by importing again with
the same label: finished episodes are skipped, the rest written, then the run finished.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import structlog

from p2w_runtime.data import DataError, NestedTooDeep, Task, TaskSet, load_tasks, parse_json
from p2w_runtime.importers import _agentoccam, _browser_use
from p2w_runtime.importers._episode import EpisodeBuilder, Header, MemoryBanks
from p2w_runtime.importers._errors import BadTrajectoryFiles, ImportConflict, TrajectoryImportError
from p2w_runtime.importers._naming import FileName, parse_file_name
from p2w_runtime.provenance import code_version, git_sha, host, package_versions
from p2w_runtime.store import (
    DERIVED_STREAM_SUFFIXES,
    ClaimHolder,
    Recorder,
    RunInfo,
    hold_claims,
    list_runs,
    seal_streams,
)
from schemas import EpisodeFinished, NewEvent, RunFinished, RunStarted, Scheme, uuid7

log = structlog.get_logger()

Format = Literal["p2w-agentoccam", "p2w-browser-use"]


@dataclass(frozen=True, slots=True)
class _Reader:
    agent: str
    header: Callable[[Path, Any, FileName], Header]
    emit: Callable[..., None]


READERS: dict[str, _Reader] = {
    _agentoccam.FORMAT: _Reader(_agentoccam.AGENT, _agentoccam.header, _agentoccam.emit),
    _browser_use.FORMAT: _Reader(_browser_use.AGENT, _browser_use.header, _browser_use.emit),
}
FORMATS: tuple[str, ...] = tuple(READERS)


@dataclass
class ImportReport:
    run_id: str
    label: str
    format: str
    resumed: bool = False
    imported: list[str] = field(default_factory=list)
    """Task ids written by this call."""
    already: list[str] = field(default_factory=list)
    """Task ids skipped because the run already holds their finished episode."""
    bad: list[TrajectoryImportError] = field(default_factory=list)
    episodes: int = 0
    """Episodes in the run after this call."""


@dataclass(frozen=True, slots=True)
class _Planned:
    path: Path
    task: Task
    scheme: Scheme | None


def _read(path: Path) -> Any:
    try:
        return parse_json(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TrajectoryImportError(path, None, "file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TrajectoryImportError(path, None, f"cannot read ({exc})") from None
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        raise TrajectoryImportError(path, None, f"invalid JSON at {where}: {exc.msg}") from None
    except NestedTooDeep as exc:
        raise TrajectoryImportError(path, None, str(exc)) from None


def _phase(scheme: Scheme | None) -> str:
    return "pre-execution" if scheme == "pre-execution" else "on-demand"


class _Planner:
    """Checks files one by one (pass 1) and rebuilds their events for appending (pass 2)."""

    def __init__(self, reader: _Reader, tasks: TaskSet, banks: MemoryBanks, run_id: str, done: set[str]) -> None:
        self.reader, self.tasks, self.banks, self.run_id, self.done = reader, tasks, banks, run_id, done
        self.seen: dict[str, Path] = {}
        self.scheme: Scheme | None = None
        self.model: str | None = None

    def build(self, path: Path, data: Any, task: Task, scheme: Scheme | None) -> list[NewEvent]:
        builder = EpisodeBuilder(
            stream=f"{self.run_id}/{task.task_id}", path=Path(path), persona=task.persona, banks=self.banks
        )
        builder.started(task, episode_id=task.task_id, scheme=scheme)
        self.reader.emit(data, builder, phase=_phase(scheme))
        return builder.events

    def check(self, path: Path, *, scheme: Scheme | None, model: str | None) -> _Planned | str:
        """The file's plan, or its task id when the run already holds it; ``TrajectoryImportError`` if bad."""
        data = _read(path)
        name = parse_file_name(path)
        head = self.reader.header(path, data, name)
        if head.task_id in self.done:
            return head.task_id
        if head.task_id in self.seen:
            raise TrajectoryImportError(path, head.field, f"task {head.task_id} is also in {self.seen[head.task_id]}")
        try:
            task = self.tasks.get(head.task_id)
        except DataError as exc:
            raise TrajectoryImportError(path, head.field, str(exc)) from None
        file_scheme = scheme or name.scheme
        file_model = model or head.model
        if file_model is None:
            raise TrajectoryImportError(path, "model", "not in the file or its name; give the model explicitly")
        if self.model is not None and file_model != self.model:
            raise TrajectoryImportError(path, "model", f"{file_model!r} differs from the run's model {self.model!r}")
        if self.scheme is not None and file_scheme is not None and file_scheme != self.scheme:
            raise TrajectoryImportError(path, "scheme", f"{file_scheme} differs from the run's scheme {self.scheme}")
        episode_scheme = self.scheme or file_scheme
        self.build(path, data, task, episode_scheme)
        self.model, self.scheme = self.model or file_model, episode_scheme
        self.seen[task.task_id] = path
        return _Planned(path, task, episode_scheme)


async def _labelled_run(store: Recorder, label: str, fmt: str) -> RunInfo | None:
    """The run an import under ``label`` continues: the newest unfinished one, else the newest finished one."""
    runs = [r for r in await list_runs(store) if r.label == label]
    for run in runs:
        if run.started.source != "imported" or run.started.import_format != fmt:
            kind = run.started.import_format or run.started.source
            raise ImportConflict(f"label {label!r} is already used by run {run.run_id} ({kind}); choose another label")
    open_runs = [r for r in runs if r.finished is None]
    return (open_runs or runs or [None])[-1]


async def _finished_episodes(store: Recorder, run_id: str) -> set[str]:
    done = set()
    for head in await store.list_streams(prefix=f"{run_id}/"):
        if head.stream.endswith(DERIVED_STREAM_SUFFIXES):
            continue
        if head.last_type != "episode.finished":
            raise ImportConflict(f"episode stream {head.stream} ends with {head.last_type}, not episode.finished")
        done.add(head.stream.removeprefix(f"{run_id}/"))
    return done


async def _end_reasons(store: Recorder, run_id: str) -> Counter[str]:
    reasons: Counter[str] = Counter()
    async for stored in store.read_all(stream_prefix=f"{run_id}/", types=["episode.finished"]):
        finished = stored.decode().payload
        assert isinstance(finished, EpisodeFinished)
        reasons[finished.end_reason] += 1
    return reasons


async def import_trajectories(store: Recorder, paths: Sequence[Path], *, label: str, **options: Any) -> ImportReport:
    """``_import_trajectories`` with the label claimed: a second import under the same label (another process)
    waits until this one is done, then resumes into the same run instead of writing its episodes twice."""

    def waiting(_key: str, holder: ClaimHolder) -> None:
        log.warning("import.waiting", label=label, holder=holder.describe())

    async with hold_claims(store, [f"import/{label}"], on_wait=waiting):
        return await _import_trajectories(store, paths, label=label, **options)


async def _import_trajectories(
    store: Recorder,
    paths: Sequence[Path],
    *,
    fmt: Format,
    tasks_dir: Path,
    history_dir: Path,
    label: str,
    scheme: Scheme | None = None,
    model: str | None = None,
    skip_bad: bool = False,
) -> ImportReport:
    """Record the trajectory files as one run labelled ``label`` with one episode per file.

    Scheme and model come from each file name (``{on|pre|base|no}_{model}_{task_id}.json``; the
    AgentOccam ``model`` field is preferred to the squeezed tag in the name) unless given; all
    files of a run must agree on them. Raises ``BadTrajectoryFiles`` (nothing written) when a file
    is bad and ``skip_bad`` is false; with ``skip_bad`` the report lists the bad files.
    """
    if fmt not in READERS:
        raise ValueError(f"unknown trajectory format {fmt!r}; known: {', '.join(FORMATS)}")
    if not paths:
        raise ImportConflict("no trajectory files given")
    tasks = load_tasks(tasks_dir)
    existing = await _labelled_run(store, label, fmt)
    if existing is not None and existing.started.dataset_hash != tasks.content_hash:
        raise ImportConflict(
            f"run {existing.run_id} labelled {label!r} was imported against dataset {existing.started.dataset_id}, "
            f"but {tasks_dir} is {tasks.dataset_id}"
        )
    run_id = existing.run_id if existing else uuid7()
    report = ImportReport(run_id=run_id, label=label, format=fmt, resumed=existing is not None)
    done = await _finished_episodes(store, run_id) if existing else set()
    planner = _Planner(READERS[fmt], tasks, MemoryBanks(history_dir), run_id, done)
    planner.scheme = existing.started.scheme if existing else scheme
    planner.model = existing.started.backbone_model if existing else model
    planned: list[_Planned] = []
    for path in map(Path, paths):
        try:
            checked = planner.check(path, scheme=scheme, model=model)
        except TrajectoryImportError as exc:
            report.bad.append(exc)
            continue
        if isinstance(checked, str):
            report.already.append(checked)
        else:
            planned.append(checked)
    if report.bad and (not skip_bad or (not planned and existing is None)):
        raise BadTrajectoryFiles(report.bad)
    if existing is not None and existing.finished is not None:
        if planned:
            raise ImportConflict(
                f"run {run_id} labelled {label!r} is finished and lacks {len(planned)} of these files "
                f"(first: {planned[0].path}); import them under a new label"
            )
        report.episodes = existing.episodes
        return report
    if existing is None:
        assert planner.model is not None
        config = {"tasks_dir": str(tasks_dir), "history_dir": str(history_dir)}
        await store.append([_run_started(run_id, label, fmt, planner.model, planner.scheme, tasks, config)])
    for item in planned:
        events = planner.build(item.path, _read(item.path), item.task, item.scheme)
        await store.append(events)
        report.imported.append(item.task.task_id)
        log.info("import.episode", run_id=run_id, task_id=item.task.task_id, events=len(events), file=str(item.path))
    reasons = await _end_reasons(store, run_id)
    report.episodes = sum(reasons.values())
    finished = RunFinished(
        status="completed",
        episodes=report.episodes,
        end_reasons=dict(sorted(reasons.items())),
        seals=await seal_streams(store, run_id, into=run_id),
    )
    await store.append([NewEvent(stream=run_id, payload=finished)])
    return report


def _run_started(
    run_id: str, label: str, fmt: str, model: str, scheme: Scheme | None, tasks: TaskSet, config: dict[str, Any]
) -> NewEvent:
    payload = RunStarted(
        run_id=run_id,
        label=label,
        source="imported",
        import_format=fmt,
        agent=READERS[fmt].agent,
        backbone_model=model,
        scheme=scheme,
        dataset_id=tasks.dataset_id,
        dataset_hash=tasks.content_hash,
        code_version=code_version(),
        git_sha=git_sha(),
        packages=package_versions(),
        config=config,
        host=host(),
    )
    return NewEvent(stream=run_id, payload=payload)
