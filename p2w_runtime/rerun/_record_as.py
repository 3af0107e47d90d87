"""`rerun --record-as LABEL`: the re-executed episodes as a new run, each event caused by its source event.

An event that already names a cause inside its episode (a retrieval caused by its query) keeps it; every other
event points to the source event of the same type, step and occurrence, so ``diff`` and the viewer can align
the two runs event by event.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from p2w_runtime.provenance import code_version, git_sha, host, package_versions
from p2w_runtime.rerun._recorded import Recorded
from p2w_runtime.store import Recorder, RunInfo, StoreError, seal_streams
from schemas import AnyPayload, NewEvent, RunFinished, uuid7

if TYPE_CHECKING:
    from p2w_runtime.rerun._rerun import EpisodeRerun

_BLOB_FIELDS = ("ax_tree", "screenshot", "dom_html", "har", "stylesheets")


async def record_as(
    store: Recorder, scratch: Recorder, run: RunInfo, episodes: Sequence[EpisodeRerun], label: str
) -> str:
    """Append the new run (started, episodes, finished with seals); returns its id."""
    run_id = uuid7()
    source_start = await store.read_event(run.run_id, 1)
    if source_start is None:
        raise StoreError(f"run {run.label!r} has no run.started event")
    started = run.started.model_copy(
        update={
            "run_id": run_id,
            "label": label,
            "code_version": code_version(),
            "git_sha": git_sha(),
            "packages": package_versions(),
            "host": host(),
            "config": {**run.started.config, "rerun_of": run.run_id},
        }
    )
    await store.append([NewEvent(stream=run_id, payload=started, causation_id=source_start.event_id)])
    reasons: Counter[str] = Counter()
    for episode in episodes:
        events = _aligned(f"{run_id}/{episode.rerun.episode_id}", episode.source.events, episode.rerun.events)
        blobs = {sha: await scratch.get_blob(sha) for sha in _blob_refs(e.payload for e in episode.rerun.events)}
        await store.append(events, blobs)
        if episode.rerun.finished is not None:
            reasons[episode.rerun.finished.end_reason] += 1
    finished = RunFinished(
        status="completed",
        episodes=sum(reasons.values()),
        end_reasons=dict(reasons),
        seals=await seal_streams(store, run_id, into=run_id),
    )
    await store.append([NewEvent(stream=run_id, payload=finished)])
    return run_id


def _aligned(stream: str, source: Sequence[Recorded], rerun: Sequence[Recorded]) -> list[NewEvent]:
    by_key: dict[tuple[str, int | None, int], str] = {}
    seen: Counter[tuple[str, int | None]] = Counter()
    for event in source:
        key = _key(event.payload)
        by_key[(*key, seen[key])] = event.event_id
        seen[key] += 1
    new_ids = {event.event_id: uuid7() for event in rerun}
    seen.clear()
    out: list[NewEvent] = []
    for event in rerun:
        key = _key(event.payload)
        cause = new_ids.get(event.causation_id or "") or by_key.get((*key, seen[key]))
        seen[key] += 1
        out.append(NewEvent(event_id=new_ids[event.event_id], stream=stream, payload=event.payload, causation_id=cause))
    return out


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
