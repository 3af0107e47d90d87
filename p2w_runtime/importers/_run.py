"""``import_trajectories``: files written by the Persona2Web runners (or of a plugin's format) -> one run of
episodes in the store.

Every file is validated before anything is written, so without ``skip_bad`` a bad file
leaves the store untouched. The episodes are then appended several files at a time, each
batch in one transaction (an episode is never split across two), and a run whose import was
interrupted (no ``run.finished``) is continued by importing again with the same label:
finished episodes are skipped, the rest written, then the run finished.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import structlog

from p2w_rt.schemas import NewEvent, Scheme, uuid7
from p2w_runtime.data import load_tasks
from p2w_runtime.domain import (
    Provenance,
    RunInfo,
    RunRecording,
    RunSpec,
    append_sealed,
    carry_dataset,
    folder_names,
    list_runs,
    resume_run,
    start_run,
)
from p2w_runtime.importers._agentoccam_log import read_runner_log
from p2w_runtime.importers._episode import MemoryBanks
from p2w_runtime.importers._errors import BadTrajectoryFiles, ImportConflict, TrajectoryImportError
from p2w_runtime.importers._formats import import_format
from p2w_runtime.importers._layout import collect
from p2w_runtime.importers._naming import crash_task_id
from p2w_runtime.importers._plan import Planned, Planner
from p2w_runtime.importers._summary import RunModel, summary_model
from p2w_runtime.store import ClaimHolder, EventStore, hold_claims

log = structlog.get_logger()

BATCH_EVENTS = 2000
"""An import transaction takes whole episodes until it holds this many events: a transaction's fixed cost (the
write lock, the log's end, the commit, the seal's second append) is paid once per batch instead of once per file
(docs/design/store.md, "Imports"), and a kill still leaves only whole episodes."""

Progress = Callable[[str, int, int], None]
"""``progress(phase, done, total)``: phase ``checking`` (every file, before any write) then ``writing``."""


@dataclass
class ImportReport:
    run_id: str
    label: str
    format: str
    resumed: bool = False
    imported: list[str] = field(default_factory=list)
    """Task ids written by this call, crashed ones included."""
    crashed: list[str] = field(default_factory=list)
    """Task ids written from a crash record (``{task}.error.json``): episodes ended by ``error``."""
    superseded: list[Path] = field(default_factory=list)
    """Crash records of tasks that also have a trajectory (a later rerun succeeded); not imported."""
    already: list[str] = field(default_factory=list)
    """Task ids skipped because the run already holds their finished episode."""
    bad: list[TrajectoryImportError] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    """Tasks the copied config lists (AgentOccam ``env.task_ids``) with no file: the runner did not finish them."""
    notes: dict[str, list[str]] = field(default_factory=dict)
    """Task id -> what its file does not account for (unlogged actions, a logged step never carried out)."""
    episodes: int = 0
    """Episodes in the run after this call."""


async def _labelled_run(store: EventStore, label: str, fmt: str) -> RunInfo | None:
    """The run an import under ``label`` continues: the newest unfinished one, else the newest finished one."""
    runs = [r for r in await list_runs(store) if r.label == label]
    for run in runs:
        if run.started.source != "imported" or run.started.import_format != fmt:
            kind = run.started.import_format or run.started.source
            raise ImportConflict(f"label {label!r} is already used by run {run.run_id} ({kind}); choose another label")
    open_runs = [r for r in runs if r.finished is None]
    return (open_runs or runs)[-1] if runs else None


def _finished_episodes(run: RunRecording) -> set[str]:
    done = set()
    for episode in run.attempts:
        if episode.end_reason is None:
            raise ImportConflict(f"episode stream {episode.stream} has no episode.finished")
        done.add(episode.episode_id)
    return done


async def _write_episodes(
    store: EventStore,
    planner: Planner,
    planned: Sequence[Planned],
    report: ImportReport,
    progress: Progress | None,
    on_episode: Callable[[str, NewEvent], None],
) -> None:
    """Append the planned episodes, whole episodes of up to ``BATCH_EVENTS`` events per transaction."""
    batch: list[tuple[Planned, list[NewEvent]]] = []
    size = written = 0

    async def write() -> None:
        nonlocal size, written
        await append_sealed(store, [event for _, events in batch for event in events])
        for item, events in batch:
            task_id = item.task.task_id
            on_episode(task_id, events[-1])  # its episode.finished: the CLI's line per written episode
            report.imported.append(task_id)
            if planner.notes.get(task_id):
                report.notes[task_id] = planner.notes[task_id]
            if item.crash:
                report.crashed.append(task_id)
            log.info("import.episode", run_id=report.run_id, task_id=task_id, events=len(events), file=str(item.path))
            written += 1
            if progress:
                progress("writing", written, len(planned))
        batch.clear()
        size = 0

    for item in planned:
        events = planner.build(item)
        batch.append((item, events))
        size += len(events)
        if size >= BATCH_EVENTS:
            await write()
    if batch:
        await write()


async def import_trajectories(store: EventStore, paths: Sequence[Path], *, label: str, **options: Any) -> ImportReport:
    """``_import_trajectories`` with the label claimed: a second import under the same label (another process)
    waits until this one is done, then resumes into the same run instead of writing its episodes twice."""

    def waiting(_key: str, holder: ClaimHolder) -> None:
        log.warning("import.waiting", label=label, holder=holder.describe())

    async with hold_claims(store, [f"import/{label}"], on_wait=waiting):
        return await _import_trajectories(store, paths, label=label, **options)


async def _import_trajectories(
    store: EventStore,
    paths: Sequence[Path],
    *,
    fmt: str,
    tasks_dir: Path,
    history_dir: Path,
    label: str,
    scheme: Scheme | None = None,
    model: str | None = None,
    skip_bad: bool = False,
    progress: Progress | None = None,
    on_episode: Callable[[str, NewEvent], None] = lambda _task_id, _finished: None,
) -> ImportReport:
    """Record the runner's files (or output folders, see ``_layout``) as one run labelled ``label``.

    One episode per trajectory and per crash record. Scheme and model come from ``_summary.json``
    or each file name (``{scheme}_{model tag}_{task id}.json``; the AgentOccam ``model`` field is
    preferred to the squeezed tag) unless given; all files of a run must agree on them. Raises
    ``BadTrajectoryFiles`` (nothing written) when a file is bad and ``skip_bad`` is false; with
    ``skip_bad`` the report lists the bad files.
    """
    reader = import_format(fmt)
    layout = collect(paths)
    if not layout.trajectories and not layout.crashes:
        raise ImportConflict(f"no trajectory files in {', '.join(map(str, paths)) or 'the arguments'}")
    tasks = load_tasks(tasks_dir)
    existing = await _labelled_run(store, label, fmt)
    if existing is not None and existing.started.dataset_hash != tasks.content_hash:
        raise ImportConflict(
            f"run {existing.run_id} labelled {label!r} was imported against dataset {existing.started.dataset_id}, "
            f"but {tasks_dir} is {tasks.dataset_id}"
        )
    run_id = existing.run_id if existing else uuid7()
    report = ImportReport(run_id=run_id, label=label, format=fmt, resumed=existing is not None)
    self_reported: dict[str, bool | None] = {}
    run_model, summary_scheme, summary = summary_model(reader, layout, report.bad, self_reported)
    if model:
        run_model = RunModel(name=model, given=True)
    elif existing is not None:
        run_model = RunModel(name=existing.started.backbone_model, tag=existing.started.config.model_tag)
    opened = await resume_run(store, run_id, abort=False) if existing else None
    done = _finished_episodes(opened) if opened else set()
    planner = Planner(reader, tasks, MemoryBanks(history_dir), run_id, done, run_model)
    planner.scheme = existing.started.scheme if existing else (scheme or summary_scheme)
    try:
        planner.runner = replace(read_runner_log(layout.runner_configs, layout.csv_summaries), success=self_reported)
    except TrajectoryImportError as exc:
        report.bad.append(exc)
    checks: list[tuple[Path, Callable[[], Planned | str | None]]] = [
        *((t.path, partial(planner.check, t, scheme=scheme)) for t in layout.trajectories),
        *((p, partial(planner.check_crash, p)) for p in layout.crashes),
    ]
    planned: list[Planned] = []
    for i, (path, check) in enumerate(checks):
        try:
            checked = check()
        except TrajectoryImportError as exc:
            report.bad.append(exc)
            continue
        finally:
            if progress:
                progress("checking", i + 1, len(checks))
        if checked is None:
            report.superseded.append(path)
        elif isinstance(checked, str):
            report.already.append(checked)
        else:
            planned.append(checked)
    crashed = {crash_task_id(p) for p in layout.crashes}
    report.missing = [t for t in planner.runner.task_ids if t not in planner.trajectory_tasks and t not in crashed]
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
        if planner.model.name is None:
            raise ImportConflict(f"no model in {layout.crashes[0]} or any other file given; give --model")
        config = {**folder_names(tasks_dir, history_dir), "model_tag": planner.model.tag, **summary}
        carried = carry_dataset(tasks, [item.task for item in planned], history_dir)
        spec = RunSpec(
            label=label,
            agent=reader.agent,
            model=planner.model.name,
            scheme=planner.scheme,
            provenance=Provenance.here(tasks.dataset_id, tasks.content_hash),
            config=config,
            source="imported",
            import_format=fmt,
            carried=carried,
        )
        opened = await start_run(store, spec, run_id=run_id)
    assert opened is not None
    await _write_episodes(store, planner, planned, report, progress, on_episode)
    report.episodes = (await opened.close()).episodes
    return report
