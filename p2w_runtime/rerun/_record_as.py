"""`rerun --record-as LABEL`: the re-executed episodes as a new run, each event caused by its source event.

An event that already names a cause inside its episode (a retrieval caused by its query) keeps it; every other
event points to the source event of the same type, step and occurrence, so ``diff`` and the viewer can align
the two runs event by event.

The copy takes one append per episode, so a rerun killed while copying leaves the run unfinished under its label.
The same ``rerun --record-as LABEL`` of the same source then completes that run (its copied episodes kept, the
others added, then closed) instead of being refused: the label is the user's handle on the result. One process
copies into a label at a time (``holding_run``), so two cannot complete one run together.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from p2w_rt.schemas import AnyPayload, Event
from p2w_runtime.domain import (
    EpisodeWriter,
    RunInfo,
    RunRecording,
    RunSpec,
    append_sealed,
    derived_dataset,
    derived_spec,
    holding_run,
    list_runs,
    resume_run,
    start_run,
)
from p2w_runtime.domain.trajectory import EpisodeRecord
from p2w_runtime.rerun._recorded import RecordedEpisode
from p2w_runtime.store import EventStore, LabelTaken, StoreError

Key = tuple[str, int | None]
"""An event's type and step: the copy's cause is the source event of the same key and occurrence."""

_BLOB_FIELDS = ("ax_tree", "screenshot", "dom_html", "har", "stylesheets")


async def record_as(
    store: EventStore,
    scratch: EventStore,
    run: RunInfo,
    episodes: Sequence[tuple[RecordedEpisode, RecordedEpisode]],
    label: str,
    *,
    history_dir: Path | None = None,
    other_dataset: bool = False,
) -> str:
    """Append the new run (started, episodes, finished with seals), or complete the unfinished copy of ``run`` a
    killed ``rerun --record-as label`` left; returns its id. ``episodes``: each source episode with its re-execution
    in ``scratch``. A new run carries the banks the re-execution searched: ``history_dir``'s when one was given
    (checked to match the run's unless ``other_dataset``), else the run's."""
    async with holding_run(store, label):
        copy = await _unfinished_copy(store, run, label)
        if copy is None:
            copy = await start_run(store, await _spec(store, run, label, history_dir, other_dataset))
        for source_episode, rerun in episodes:
            if source_episode.trajectory.task_id not in copy.counted:  # else copied before the last one was killed
                await _copy_episode(store, scratch, copy.run_id, source_episode, rerun)
        await copy.close()
    return copy.run_id


async def check_copy_label(store: EventStore, run: RunInfo, label: str) -> None:
    """Before any work: ``label`` is free, or holds an unfinished copy of ``run`` to complete; else ``LabelTaken``."""
    await _copy_run(store, run, label)


async def _copy_run(store: EventStore, run: RunInfo, label: str) -> RunInfo | None:
    """The run holding ``label``: None when none does, the run when it is a copy of ``run`` left unfinished."""
    holder = next((r for r in await list_runs(store) if r.label == label), None)
    if holder is None:
        return None
    if holder.finished is None and (holder.started.config.model_extra or {}).get("rerun_of") == run.run_id:
        return holder
    raise LabelTaken(label, holder.run_id, getattr(store, "label", "the store"))


async def _unfinished_copy(store: EventStore, run: RunInfo, label: str) -> RunRecording | None:
    """The copy of ``run`` a killed ``rerun --record-as label`` left unfinished, opened to complete; read under
    the claim, so no other process is writing it."""
    holder = await _copy_run(store, run, label)
    return None if holder is None else await resume_run(store, holder.run_id)


async def _spec(store: EventStore, run: RunInfo, label: str, history_dir: Path | None, other_dataset: bool) -> RunSpec:
    source_start = await store.read_event(run.run_id, 1)
    if source_start is None:
        raise StoreError(f"run {run.label!r} has no run.started event")
    source = run.started
    return derived_spec(
        source,
        label,
        model=source.backbone_model,
        scheme=source.scheme,
        config={"rerun_of": run.run_id},
        other_dataset=other_dataset,
        carried=await derived_dataset(store, run, history_dir),
        embedder=source.embedder,
        caused_by=source_start.event_id,
    )


async def _copy_episode(
    store: EventStore, scratch: EventStore, run_id: str, source_episode: RecordedEpisode, rerun: RecordedEpisode
) -> None:
    """Append one re-executed episode to the copy ``run_id`` in one append, then seal it."""
    recorded = source_episode.trajectory
    keyed: list[tuple[Key, str]] = [(("episode.started", None), recorded.started_event_id)]
    keyed += [(_record_key(record), record.event_id) for record in recorded.records]
    writer = EpisodeWriter.copying(run_id, rerun.episode_id, frozenset(i for _, i in keyed))
    copied = [stored.decode() async for stored in scratch.read_stream(rerun.stream)]
    _aligned(writer, keyed, copied)
    events, _ = writer.take()
    blobs = {sha: await scratch.get_blob(sha) for sha in _blob_refs(e.payload for e in copied)}
    await append_sealed(store, events, blobs)


def _aligned(writer: EpisodeWriter, source: Sequence[tuple[Key, str]], rerun: Sequence[Event]) -> None:
    """Stage the re-executed events (whole payloads, read from the scratch store: this is a copy), each caused by
    its own in-episode cause or else its source counterpart; ``source`` is each source event's key and id."""
    by_key: dict[tuple[str, int | None, int], str] = {}
    seen: Counter[Key] = Counter()
    for key, event_id in source:
        by_key[(*key, seen[key])] = event_id
        seen[key] += 1
    new_ids: dict[str, str] = {}
    seen.clear()
    for event in rerun:
        key = _key(event.payload)
        cause = new_ids.get(event.causation_id or "") or by_key.get((*key, seen[key]))
        seen[key] += 1
        new_ids[event.event_id] = writer.add(event.payload, causation_id=cause).event_id


def _key(payload: AnyPayload) -> Key:
    step = getattr(payload, "step", None)
    return payload.type, step if isinstance(step, int) else None


def _record_key(record: EpisodeRecord) -> Key:
    """A source event's key, from its record (the source is read as its trajectory)."""
    step = getattr(record, "step", None)
    return record.EVENT_TYPE, step if isinstance(step, int) else None


def _blob_refs(payloads: Iterable[AnyPayload]) -> set[str]:
    refs: set[str] = set()
    for payload in payloads:
        for name in _BLOB_FIELDS:
            value = getattr(payload, name, None)
            if isinstance(value, str):
                refs.add(value)
    return refs
