"""Which task set a run states, and whether a resume (or a joiner) of ``open_run`` or ``record --exec`` is given it.

A run's ``dataset_hash`` names the task files it was recorded from: the ``TaskSet.content_hash`` of their folder,
as the own agent, the importers and ``attach-dataset`` have it, and ``record --exec`` (it passes its ``TaskSet``
with ``only``); the selection is ``config.tasks``. Only tasks given as plain objects, with no files, are named by
the hash of those tasks (``tasks_hash``), as ``record --exec`` runs named their selection before. A resume gives the
same task set when it selects the recorded tasks and, reading the recorded hash as the form it is:

- its ``TaskSet`` has the recorded folder hash (the folder given again);
- or its selected tasks have the recorded tasks hash (plain tasks; a ``record --exec`` run stored so);
- or it holds, unchanged, every task file the run carries (the run's own files, which ``record --resume`` and
  ``record --exec --resume`` read, or a folder holding them), as ``record --resume --tasks DIR`` checks them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from p2w_rt.schemas import Scheme, canonical_json
from p2w_runtime.data import TaskSet
from p2w_runtime.domain import Provenance, RunInfo, TaskLike, carried_files, run_tasks
from p2w_runtime.errors import UserError
from p2w_runtime.store import EventStore


def provenance_of(
    tasks: TaskSet | Sequence[TaskLike], listed: Sequence[TaskLike], dataset_id: str | None
) -> Provenance:
    """The ``Provenance`` a new run states: its folder's hash for a ``TaskSet``, else the hash of ``listed``."""
    if isinstance(tasks, TaskSet):
        return Provenance.here(dataset_id or tasks.dataset_id, tasks.content_hash)
    digest = tasks_hash(listed)
    return Provenance.here(dataset_id or f"tasks@{digest[:12]}", digest)


def tasks_hash(tasks: Sequence[TaskLike]) -> str:
    """What identifies a task list that is not a Persona2Web task folder: its tasks' ids, intents and start URLs."""
    rows = [[t.task_id, t.intent, t.start_url] for t in tasks]
    return hashlib.sha256(canonical_json(rows)).hexdigest()


async def check_same(
    store: EventStore,
    run: RunInfo,
    *,
    agent: str,
    model: str,
    scheme: Scheme | None,
    tasks: TaskSet | Sequence[TaskLike],
    listed: Sequence[TaskLike],
    dataset_id: str,
) -> None:
    """A resumed run measures the same thing: one ``UserError`` naming every field that differs."""
    started = run.started
    if started.source != "recorded":
        raise UserError(f"run {run.label!r} was imported, not recorded; only recorded runs can be resumed")
    recorded = {"agent": started.agent, "model": started.backbone_model, "scheme": started.scheme}
    given = {"agent": agent, "model": model, "scheme": scheme}
    changed = [
        f"{name} {given[name]!r} (recorded: {recorded[name]!r})" for name in recorded if recorded[name] != given[name]
    ]
    chosen, kept = {t.task_id for t in listed}, started.config.tasks
    if kept is not None and chosen != set(kept):
        changed.append(f"tasks {_ids(chosen)} (recorded: {_ids(kept)})")
    elif not await _same_files(store, run, tasks, listed):
        changed.append(f"task files {dataset_id} (recorded: {started.dataset_id}, other content)")
    if changed:
        raise UserError(f"run {run.label!r} was recorded with other settings: {', '.join(changed)}")


async def _same_files(
    store: EventStore, run: RunInfo, tasks: TaskSet | Sequence[TaskLike], listed: Sequence[TaskLike]
) -> bool:
    recorded = run.started.dataset_hash
    if isinstance(tasks, TaskSet) and tasks.content_hash == recorded:
        return True
    order = {task_id: n for n, task_id in enumerate(run.started.config.tasks or [])}  # as it was hashed
    if tasks_hash(sorted(listed, key=lambda t: order.get(t.task_id, len(order)))) == recorded:
        return True
    files = await carried_files(store, run)
    if not isinstance(tasks, TaskSet) or files is None or not files.tasks:
        return False
    carried = await run_tasks(store, run)
    return all(_same_task(tasks, task_id, carried) for task_id in carried.tasks)


def _same_task(given: TaskSet, task_id: str, carried: TaskSet) -> bool:
    mine, theirs = given.tasks.get(task_id), carried.tasks[task_id]
    return mine is not None and (mine.level, mine.file) == (theirs.level, theirs.file)


def _ids(ids: set[str] | list[str]) -> str:
    shown = sorted(set(ids))
    more = f" and {len(shown) - 3} more" if len(shown) > 3 else ""
    return ",".join(shown[:3]) + more
