"""`rerun --record-as LABEL`: the re-executed episodes as a new run, each event caused by its source event.

An event that already names a cause inside its episode (a retrieval caused by its query) keeps it; every other
event points to the source event of the same type, step and occurrence, so ``diff`` and the viewer can align
the two runs event by event.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from p2w_rt.schemas import AnyPayload, Event
from p2w_runtime.domain import EpisodeWriter, RunInfo, append_sealed, derived_dataset, derived_spec, start_run
from p2w_runtime.domain.trajectory import EpisodeRecord
from p2w_runtime.rerun._recorded import RecordedEpisode
from p2w_runtime.store import EventStore, StoreError

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
    """Append the new run (started, episodes, finished with seals); returns its id. ``episodes``: each source
    episode with its re-execution in ``scratch``. The new run carries the banks the re-execution searched:
    ``history_dir``'s when one was given (checked to match the run's unless ``other_dataset``), else the run's."""
    source_start = await store.read_event(run.run_id, 1)
    if source_start is None:
        raise StoreError(f"run {run.label!r} has no run.started event")
    source = run.started
    spec = derived_spec(
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
    copy = await start_run(store, spec)
    for source_episode, rerun in episodes:
        recorded = source_episode.trajectory
        keyed: list[tuple[Key, str]] = [(("episode.started", None), recorded.started_event_id)]
        keyed += [(_record_key(record), record.event_id) for record in recorded.records]
        writer = EpisodeWriter.copying(copy.run_id, rerun.episode_id, frozenset(i for _, i in keyed))
        copied = [stored.decode() async for stored in scratch.read_stream(rerun.stream)]
        _aligned(writer, keyed, copied)
        events, _ = writer.take()
        blobs = {sha: await scratch.get_blob(sha) for sha in _blob_refs(e.payload for e in copied)}
        await append_sealed(store, events, blobs)
    await copy.close()
    return copy.run_id


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
