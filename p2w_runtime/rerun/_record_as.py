"""`rerun --record-as LABEL`: the re-executed episodes as a new run, each event caused by its source event.

An event that already names a cause inside its episode (a retrieval caused by its query) keeps it; every other
event points to the source event of the same type, step and occurrence, so ``diff`` and the viewer can align
the two runs event by event.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from p2w_runtime.domain import (
    EpisodeWriter,
    Provenance,
    RunInfo,
    append_sealed,
    close_run,
    derived_dataset,
    inherited_config,
    run_started,
)
from p2w_runtime.rerun._recorded import Recorded
from p2w_runtime.store import EventStore, StoreError
from schemas import AnyPayload, uuid7

if TYPE_CHECKING:
    from p2w_runtime.rerun._rerun import EpisodeRerun

_BLOB_FIELDS = ("ax_tree", "screenshot", "dom_html", "har", "stylesheets")


async def record_as(
    store: EventStore, scratch: EventStore, run: RunInfo, episodes: Sequence[EpisodeRerun], label: str
) -> str:
    """Append the new run (started, episodes, finished with seals); returns its id."""
    run_id = uuid7()
    source_start = await store.read_event(run.run_id, 1)
    if source_start is None:
        raise StoreError(f"run {run.label!r} has no run.started event")
    source = run.started
    started = run_started(
        run_id,
        label=label,
        agent=source.agent,
        model=source.backbone_model,
        scheme=source.scheme,
        provenance=Provenance.here(source.dataset_id, source.dataset_hash),
        config={**inherited_config(source.config), "rerun_of": run.run_id},
        dataset=(await derived_dataset(store, run)).files,
        embedder=source.embedder,
    )
    await store.append([started.model_copy(update={"causation_id": source_start.event_id})])
    for episode in episodes:
        writer = EpisodeWriter.copying(
            run_id, episode.rerun.episode_id, frozenset(e.event_id for e in episode.source.events)
        )
        _aligned(writer, episode.source.events, episode.rerun.events)
        events, _ = writer.take()
        blobs = {sha: await scratch.get_blob(sha) for sha in _blob_refs(e.payload for e in episode.rerun.events)}
        await append_sealed(store, events, blobs)
    await close_run(store, run_id)
    return run_id


def _aligned(writer: EpisodeWriter, source: Sequence[Recorded], rerun: Sequence[Recorded]) -> None:
    """Stage the re-executed events, each caused by its own in-episode cause or else its source counterpart."""
    by_key: dict[tuple[str, int | None, int], str] = {}
    seen: Counter[tuple[str, int | None]] = Counter()
    for event in source:
        key = _key(event.payload)
        by_key[(*key, seen[key])] = event.event_id
        seen[key] += 1
    new_ids: dict[str, str] = {}
    seen.clear()
    for event in rerun:
        key = _key(event.payload)
        cause = new_ids.get(event.causation_id or "") or by_key.get((*key, seen[key]))
        seen[key] += 1
        new_ids[event.event_id] = writer.add(event.payload, causation_id=cause).event_id


def _key(payload: AnyPayload) -> tuple[str, int | None]:
    step = getattr(payload, "step", None)
    return payload.type, step if isinstance(step, int) else None


def _blob_refs(payloads: Iterable[AnyPayload]) -> set[str]:
    refs: set[str] = set()
    for payload in payloads:
        for name in _BLOB_FIELDS:
            value = getattr(payload, name, None)
            if isinstance(value, str):
                refs.add(value)
    return refs
