"""The dataset a run carries: its task files and memory banks, stored once as blobs and named by hash.

A run recorded in December replays in March on any machine: ``rerun``, ``fork``, ``replay --retriever`` and
``record --resume`` read the files from the run, never from the folders they were recorded from. A folder given
instead (``--tasks`` / ``--history``) must hold the same content, unless the user says otherwise
(``--other-dataset``). docs/design/dataset.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from p2w_rt.schemas import DatasetFiles, RunConfig, RunDatasetAttached, blob_hash, canonical_json
from p2w_runtime.command_line import command_line
from p2w_runtime.data import (
    BankFiles,
    BankFolder,
    BankSource,
    DataError,
    TaskSet,
    decode_json,
    load_tasks,
    tasks_from_files,
)
from p2w_runtime.domain._runs import RunInfo
from p2w_runtime.domain._started import TaskLike
from p2w_runtime.errors import UserError
from p2w_runtime.store import EventStore

OTHER_DATASET = "--other-dataset"
LEGACY_PATH_KEYS = ("tasks_dir", "history_dir")
"""Where runs recorded before they carried their dataset kept its folders: absolute paths of the recording machine."""


@dataclass(frozen=True)
class CarriedDataset:
    """What a new run's ``run.started`` names (``files``) and the bytes to store beside it (``blobs``)."""

    files: DatasetFiles | None
    """None: the source of a derived run carried none (recorded before runs carried their dataset)."""
    blobs: dict[str, bytes]


def carry_dataset(tasks: TaskSet | None, selected: Iterable[TaskLike], history_dir: Path | None) -> CarriedDataset:
    """The selected task files, the level-0 file of each one's query set (its answer key) and the memory bank of
    each persona that has one in ``history_dir``. Folders are kept by name only."""
    blobs: dict[str, bytes] = {}
    task_files: dict[str, str] = {}
    chosen = list(selected)
    if tasks is not None:
        keys = {t.task_id for t in chosen} | {
            group[0].task_id for t in chosen for group in [tasks.query_sets.get(t.query_set, [])] if group
        }
        for task_id in sorted(keys):
            task = tasks.tasks[task_id]
            if task.path is not None:
                name = task.path.relative_to(tasks.root).as_posix()
                task_files[name] = _keep(blobs, task.path.read_bytes())
    banks: dict[str, str] = {}
    if history_dir is not None:
        for persona in sorted({t.persona for t in chosen}):
            path = Path(history_dir) / f"{persona}.json"
            if path.is_file():
                banks[persona] = _keep(blobs, path.read_bytes())
    files = DatasetFiles(
        tasks_folder=_folder_name(tasks.root) if tasks is not None and task_files else None,
        history_folder=_folder_name(history_dir) if history_dir is not None and banks else None,
        tasks=task_files,
        banks=banks,
    )
    return CarriedDataset(files, blobs)


async def carried_files(store: EventStore, run: RunInfo) -> DatasetFiles | None:
    """The dataset the run carries: named by its ``run.started``, or attached later; None for an older run."""
    if run.started.dataset is not None:
        return run.started.dataset
    attached = None
    async for stored in store.read_stream(run.run_id):
        if stored.type == "run.dataset_attached":
            payload = stored.decode().payload
            assert isinstance(payload, RunDatasetAttached)
            attached = payload.dataset
    return attached


async def run_banks(
    store: EventStore, run: RunInfo, history_dir: Path | None = None, *, other_dataset: bool = False
) -> BankSource:
    """The memory banks to search for ``run``: its own, or ``history_dir`` once it is checked to hold the same."""
    files = await carried_files(store, run)
    if history_dir is not None:
        if not Path(history_dir).is_dir():
            raise UserError(f"{history_dir}: history folder not found")
        if files is not None and not other_dataset:
            await _refuse_other(store, run, files, None, history_dir)
        return BankFolder(history_dir)
    if files is None or not files.banks:
        raise missing_dataset(run, "memory banks", "--history DIR")
    blobs = {persona: await store.get_blob(sha) for persona, sha in files.banks.items()}
    return BankFiles(blobs, f"run {run.label!r}")


async def run_tasks(
    store: EventStore,
    run: RunInfo,
    tasks_dir: Path | None = None,
    *,
    other_dataset: bool = False,
    offer_other: bool = True,
) -> TaskSet:
    """The task files of ``run``: its own, or ``tasks_dir`` once it is checked to hold the same; a refusal names
    ``--other-dataset`` only where the command has it (``offer_other``: a resume has not)."""
    files = await carried_files(store, run)
    if tasks_dir is not None:
        if files is not None and not other_dataset:
            await _refuse_other(store, run, files, tasks_dir, None, offer_other=offer_other)
        return load_tasks(tasks_dir)
    if files is None or not files.tasks:
        raise missing_dataset(run, "task files", "--tasks DIR")
    blobs = {name: await store.get_blob(sha) for name, sha in files.tasks.items()}
    return tasks_from_files(Path(files.tasks_folder or "tasks"), blobs)


async def derived_dataset(store: EventStore, run: RunInfo, history_dir: Path | None = None) -> CarriedDataset:
    """What a run made from ``run`` (a fork, a rerun recorded as a run) carries: ``run``'s files, its banks
    replaced by those of ``history_dir`` when one was given. The source's blobs are already stored."""
    files = await carried_files(store, run)
    if history_dir is None:
        return CarriedDataset(files, {})
    files = files or DatasetFiles()
    blobs: dict[str, bytes] = {}
    banks = {}
    for persona in sorted(files.banks) or BankFolder(history_dir).personas():
        path = Path(history_dir) / f"{persona}.json"
        if path.is_file():
            banks[persona] = _keep(blobs, path.read_bytes())
    changed = files.model_copy(update={"banks": banks, "history_folder": _folder_name(history_dir)})
    return CarriedDataset(changed, blobs)


def inherited_config(config: RunConfig) -> dict[str, Any]:
    """A source run's config, as stored, for a run made from it, without the folder paths runs recorded before they
    carried their dataset kept (a path of another machine, never to be copied into a new event)."""
    return {k: v for k, v in config.stored().items() if k not in LEGACY_PATH_KEYS}


def missing_dataset(run: RunInfo, what: str, option: str) -> UserError:
    """One line for a run without its dataset: what it lacks, why when the log says (a run recorded before runs
    carried their dataset kept its folders' paths in its config), and how to attach it."""
    legacy = any(run.started.config.given(key) for key in LEGACY_PATH_KEYS)
    why = " (recorded before runs carried their dataset)" if legacy else " (recorded without it)"
    attach = command_line("attach-dataset", run.label, options=("--tasks", "DIR", "--history", "DIR"))
    return UserError(f"run {run.label!r} carries no {what}{why}: attach them with `{attach}`, or pass {option}")


async def _refuse_other(
    store: EventStore,
    run: RunInfo,
    files: DatasetFiles,
    tasks_dir: Path | None,
    history_dir: Path | None,
    *,
    offer_other: bool = True,
) -> None:
    """``UserError`` naming the first file of the given folder that differs from the one the run carries."""
    pairs: list[tuple[Path, str]] = []
    if tasks_dir is not None:
        pairs += [(Path(tasks_dir) / name, sha) for name, sha in sorted(files.tasks.items())]
    if history_dir is not None:
        pairs += [(Path(history_dir) / f"{p}.json", sha) for p, sha in sorted(files.banks.items())]
    for path, sha in pairs:
        if not path.is_file():
            reason = "is missing"
        elif _same_file(path, await store.get_blob(sha), sha):
            continue
        else:
            reason = "differs from the file the run carries"
        other = f", or pass {OTHER_DATASET} to use these" if offer_other else ""
        raise UserError(
            f"{path} {reason} (run {run.label!r} was recorded on blob {sha[:12]}); "
            f"drop the folder option to use the run's own files{other}"
        )


def _same_file(path: Path, carried: bytes, sha: str) -> bool:
    """Same bytes, or the same JSON laid out otherwise (whitespace, key order): what a replay would read."""
    data = path.read_bytes()
    if blob_hash(data) == sha:
        return True
    try:
        return canonical_json(decode_json(data, path)) == canonical_json(decode_json(carried, path))
    except DataError:
        return False


def other_dataset_config(other_dataset: bool) -> dict[str, bool]:
    """What a result derived with ``--other-dataset`` records in its config, so that its cache key differs."""
    return {"other_dataset": True} if other_dataset else {}


def _keep(blobs: dict[str, bytes], data: bytes) -> str:
    sha = blob_hash(data)
    blobs[sha] = data
    return sha


def folder_names(tasks_dir: Path | None, history_dir: Path | None) -> dict[str, str | None]:
    """What a run's config keeps of the folders it was given: their names, for people; a replay never reads them."""
    return {
        "tasks_folder": _folder_name(tasks_dir) if tasks_dir is not None else None,
        "history_folder": _folder_name(history_dir) if history_dir is not None else None,
    }


def _folder_name(path: Path) -> str:
    return Path(path).absolute().name
