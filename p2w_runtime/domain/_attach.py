"""``attach-dataset``: give a run recorded before runs carried their dataset the files it was recorded on.

The files are checked first: the task folder against the run's ``dataset_hash``, each memory bank against the
index hash its recorded searches name (where the run searched it). Then one ``run.dataset_attached`` is
appended to the run's stream, naming the blobs stored with it; nothing recorded is rewritten.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from p2w_rt.schemas import DatasetFiles, EpisodeStarted, HistoryRetrieval, MemoryEntry, NewEvent, RunDatasetAttached
from p2w_runtime.data import BankFolder, DataError, Task, load_tasks
from p2w_runtime.domain._dataset import carried_files, carry_dataset
from p2w_runtime.domain._listing import episodes_of
from p2w_runtime.domain._runs import RunInfo
from p2w_runtime.errors import UserError
from p2w_runtime.store import EventStore, seal_streams

BankIndexHash = Callable[[str, list[MemoryEntry]], str]
"""The index hash a search over these entries with this model records (``p2w_runtime.retrieval``)."""


@dataclass(frozen=True, slots=True)
class Attached:
    files: DatasetFiles
    appended: bool
    """False: the run already carried a dataset; nothing was written."""
    banks_checked: int
    """Banks matched against a recorded search's index hash (the others: the run never searched them)."""


async def attach_dataset(
    store: EventStore, run: RunInfo, tasks_dir: Path, history_dir: Path | None, index_hash: BankIndexHash
) -> Attached:
    """Check ``tasks_dir`` and ``history_dir`` against what ``run`` recorded, then append them as blobs."""
    present = await carried_files(store, run)
    if present is not None:
        return Attached(present, appended=False, banks_checked=0)
    tasks = load_tasks(tasks_dir)
    if tasks.content_hash != run.started.dataset_hash:
        raise UserError(
            f"{tasks_dir}: these task files are dataset {tasks.dataset_id}; run {run.label!r} was recorded on "
            f"{run.started.dataset_id}: give the task folder it was recorded from"
        )
    refs = await episodes_of(store, run.run_id, every_attempt=True)
    unknown = sorted({r.task_id for r in refs} - set(tasks.tasks))
    if unknown:
        raise UserError(f"{tasks_dir}: no task file for {', '.join(unknown[:3])} that run {run.label!r} recorded")
    selected = [tasks.tasks[r.task_id] for r in refs]
    searched = await _recorded_indexes(store, [r.stream for r in refs])
    checked = _check_banks(run, selected, history_dir, searched, index_hash)
    carried = carry_dataset(tasks, selected, history_dir)
    assert carried.files is not None  # carry_dataset always names what it carried
    payload = RunDatasetAttached(dataset=carried.files, seals=await seal_streams(store, run.run_id, into=run.run_id))
    await store.append([NewEvent(stream=run.run_id, payload=payload)], carried.blobs)
    return Attached(carried.files, appended=True, banks_checked=checked)


async def _recorded_indexes(store: EventStore, streams: list[str]) -> dict[str, tuple[str, str, str]]:
    """Persona -> (model id, index hash, episode stream) of the first search each persona's episodes recorded."""
    found: dict[str, tuple[str, str, str]] = {}
    for stream in streams:
        persona = None
        async for stored in store.read_stream(stream):
            if stored.type not in ("episode.started", "history.retrieval"):
                continue
            payload = stored.decode().payload
            if isinstance(payload, EpisodeStarted):
                persona = payload.persona
                if persona in found:
                    break
            elif isinstance(payload, HistoryRetrieval) and persona is not None:
                found[persona] = (payload.model_id, payload.index_hash, stream)
                break
    return found


def _check_banks(
    run: RunInfo,
    selected: list[Task],
    history_dir: Path | None,
    searched: dict[str, tuple[str, str, str]],
    index_hash: BankIndexHash,
) -> int:
    personas = sorted({t.persona for t in selected})
    if history_dir is None:
        if searched:
            raise UserError(f"run {run.label!r} searched memory banks ({', '.join(sorted(searched))}): give --history")
        return 0
    banks = BankFolder(history_dir)
    checked = 0
    for persona in personas:
        path = Path(history_dir) / f"{persona}.json"
        if not path.is_file():
            if persona in searched:
                raise UserError(f"{path}: missing; run {run.label!r} searched {persona}'s memory bank")
            continue
        try:
            entries = banks.bank(persona)
        except DataError as exc:
            raise UserError(str(exc)) from None
        if persona in searched:
            model_id, recorded, stream = searched[persona]
            if index_hash(model_id, entries) != recorded:
                raise UserError(
                    f"{path}: not the memory bank run {run.label!r} searched (episode {stream} recorded index "
                    f"{recorded[:12]} with {model_id})"
                )
            checked += 1
    return checked
