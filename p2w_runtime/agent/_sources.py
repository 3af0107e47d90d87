"""Where a recording reads its tasks and memory banks: the folders given, or, on ``--resume``, the run itself.

A resumed run carries the files it was started on (``carry_dataset``), so it resumes on any machine; a folder
given again must hold the same content. Runs recorded before they carried files resume from the folders their
``run.started.config`` names, as they always did.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from p2w_rt.schemas import DatasetFiles, blob_hash
from p2w_runtime.agent._resume import check_dataset
from p2w_runtime.data import BankFolder, BankSource, DataError, Task, TaskSet, curation_tasks, load_tasks
from p2w_runtime.domain import (
    CarriedDataset,
    RunInfo,
    carried_files,
    carry_dataset,
    folder_names,
    run_banks,
    run_tasks,
)
from p2w_runtime.scratch import scratch_folder
from p2w_runtime.store import EventStore

if TYPE_CHECKING:
    from p2w_runtime.agent._request import RecordRequest


def load_dataset(request: RecordRequest) -> TaskSet:
    """The task files, or the AgenticShop profiles as curation tasks."""
    if request.profiles is not None:
        if not request.start_url:
            raise DataError(f"{request.profiles}: curation tasks need a start URL")
        return curation_tasks(request.profiles, request.start_url)
    return load_tasks(request.tasks_dir)


async def sources(store: EventStore, request: RecordRequest, resume: RunInfo | None) -> tuple[TaskSet, BankSource]:
    """The tasks and memory banks to record (or resume) on; user errors before anything is written."""
    if resume is None:
        return load_dataset(request), BankFolder(request.history_dir)
    carried = await carried_files(store, resume)
    if carried is not None and request.profiles is not None and "--profiles" not in request.given:
        dataset = await _carried_profiles(store, carried, request.profiles, request.start_url or "")
        check_dataset(resume, dataset)
        return dataset, BankFolder(request.history_dir)
    if carried is None or request.profiles is not None:
        dataset = load_dataset(request)
        check_dataset(resume, dataset)
        return dataset, BankFolder(request.history_dir)
    given_tasks = request.tasks_dir if "--tasks" in request.given else None
    if given_tasks is None and carried.tasks:
        dataset = await run_tasks(store, resume)
    else:
        dataset = load_dataset(request)
        check_dataset(resume, dataset)
    given_history = request.history_dir if "--history" in request.given else None
    if given_history is None and not carried.banks:
        return dataset, BankFolder(request.history_dir)
    return dataset, await run_banks(store, resume, given_history)


def new_run_files(request: RecordRequest, dataset: TaskSet, tasks: Sequence[Task]) -> CarriedDataset:
    """What a new run carries: its task files and banks, or its AgenticShop profile files (not task files)."""
    if request.profiles is None:
        return carry_dataset(dataset, tasks, request.history_dir)
    profiles = Path(request.profiles)
    files = sorted(profiles.glob("*_user_profile.json")) if profiles.is_dir() else [profiles]
    blobs = {blob_hash(data): data for data in (f.read_bytes() for f in files)}
    names = {f.relative_to(profiles.parent).as_posix(): blob_hash(f.read_bytes()) for f in files}
    return CarriedDataset(DatasetFiles(tasks=names), blobs)


async def _carried_profiles(store: EventStore, files: DatasetFiles, profiles: Path, start_url: str) -> TaskSet:
    """The curation tasks of the profile files a run carries, read from a scratch copy under their own names."""
    with scratch_folder("profiles") as tmp:
        for name, sha in files.tasks.items():
            path = tmp / name
            if tmp.resolve() not in path.resolve().parents:
                raise DataError(f"{name}: a carried profile file named outside its folder")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(await store.get_blob(sha))
        return curation_tasks(tmp / Path(profiles).name, start_url)


def folder_config(request: RecordRequest) -> dict[str, Any]:
    """What ``run.started.config`` keeps of the folders given: their names, read by people, never by a replay."""
    if request.profiles is not None:
        return {"profiles": Path(request.profiles).absolute().name, "start_url": request.start_url}
    return folder_names(request.tasks_dir, request.history_dir)
