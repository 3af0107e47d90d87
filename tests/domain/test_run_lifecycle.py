"""The one run lifecycle (``p2w_runtime/domain/_lifecycle.py``): a run started with its label held and its files
carried, resumed with its dead attempts closed and its tasks numbered on, shared by recorders, closed once."""

from __future__ import annotations

from dataclasses import replace

import pytest

from p2w_rt.schemas import DatasetFiles, NewEvent, RunStarted, blob_hash
from p2w_runtime.domain import (
    CarriedDataset,
    Provenance,
    RunRecording,
    RunSpec,
    check_label_free,
    episodes_of,
    list_runs,
    resume_run,
    start_run,
)
from p2w_runtime.store import LabelTaken, MemoryEventStore
from p2w_runtime.testing.episodes import EpisodeBuilder, SketchTask

SPEC = RunSpec(label="nightly", agent="a", model="m", scheme="on-demand", provenance=Provenance.synthetic("s"))


def _task(task_id: str) -> SketchTask:
    return SketchTask(task_id, "q", "https://shop.example", 1, None)


def _attempt(run_id: str, episode_id: str, end: str | None, cost_usd: float | None = None) -> list[NewEvent]:
    b = EpisodeBuilder(run_id, episode_id.split("#")[0], query="q", episode_id=episode_id)
    if end is not None:
        b.finish(end, cost_usd=cost_usd)
    return b.events


async def test_a_started_run_carries_its_files_and_its_label_is_then_refused() -> None:
    store = MemoryEventStore()
    data = b'{"task_id": "t1"}'
    carried = CarriedDataset(DatasetFiles(tasks={"t1.json": blob_hash(data)}), {blob_hash(data): data})
    spec = replace(SPEC, carried=carried, caused_by="e1")
    run = await start_run(store, spec, run_id="r1")
    (info,) = await list_runs(store)
    assert run.run_id == info.run_id == "r1" and info.started.dataset == carried.files
    assert await store.get_blob(blob_hash(data)) == data
    first = await store.read_event("r1", 1)
    assert first is not None and first.causation_id == "e1" and isinstance(first.decode().payload, RunStarted)
    with pytest.raises(LabelTaken):
        await check_label_free(store, "nightly")
    with pytest.raises(LabelTaken):
        await start_run(store, SPEC)
    await check_label_free(store, "other")


async def test_resuming_closes_dead_attempts_and_numbers_the_next_try_on() -> None:
    store = MemoryEventStore()
    run = await start_run(store, SPEC)
    for episode_id, end, cost in [
        ("a", "aborted", None),
        ("a#2", "answered", 0.5),
        ("b", None, None),
        ("c", "error", 0.125),
    ]:
        await store.append(_attempt(run.run_id, episode_id, end, cost))
    looked = await resume_run(store, run.run_id, abort=False)
    assert looked.aborted == 0 and [a.end_reason for a in looked.attempts if a.task_id == "b"] == [None]
    resumed = await resume_run(store, run.run_id)
    assert resumed.aborted == 1 and set(resumed.counted) == {"a", "c"}
    ends = {a.stream.split("/")[1]: a.end_reason for a in await episodes_of(store, run.run_id, every_attempt=True)}
    assert ends["b"] == "aborted"
    tasks = [_task(t) for t in ("a", "b", "c", "d")]
    assert [t.task_id for t in resumed.todo(tasks)] == ["b", "d"]
    assert [resumed.episode_id("b"), resumed.episode_id("d"), resumed.episode_id("d", attempt=5)] == ["b#2", "d", "d#5"]
    await store.append(_attempt(run.run_id, "b#2", "answered", 0.25))
    resumed.ended("b", counts=True)
    resumed.ended("d", counts=False)
    assert [t.task_id for t in resumed.todo(tasks)] == ["d"]
    finished = await resumed.close(interrupted=True)
    # the cost of every attempt the log holds, the first session's too (not only what this one recorded)
    assert (finished.status, finished.cost_usd, finished.episodes) == ("interrupted", 0.875, 3)
    assert (await resumed.close(cost_usd=1.0)).cost_usd == 1.0  # a resume may close it again


async def test_recorders_sharing_a_run_take_dead_attempts_over_and_finish_it_once() -> None:
    store = MemoryEventStore()
    first = await start_run(store, SPEC)
    await store.append(_attempt(first.run_id, "a", None))
    await store.append(_attempt(first.run_id, "b", "answered"))
    shared = RunRecording(store, first.run_id)
    taken = await shared.take_over("a", "abandoned")
    assert taken is not None and (taken.attempt, taken.closed) == (2, [f"{first.run_id}/a"])
    assert await shared.take_over("b", "abandoned") is None
    assert await shared.take_over("c", "abandoned") == type(taken)(1, [])
    closed = await shared.close_once()
    assert closed is not None and closed.status == "completed"
    assert await RunRecording(store, first.run_id).close_once() is None
    (info,) = await list_runs(store)
    assert info.status == "completed" and info.attempts == 2


async def test_a_dead_attempt_is_closed_with_the_steps_it_completed() -> None:
    """Closed as aborted, a dead attempt said 0 steps whatever it had done (its ``episode.finished`` had none)."""
    store = MemoryEventStore()
    run = await start_run(store, SPEC)
    for episode_id, steps in [("a", 2), ("b", 0)]:
        b = EpisodeBuilder(run.run_id, episode_id, query="q")
        for step in range(1, steps + 1):
            b.observation(step, url="https://shop.example")
            b.action(step, "click", "[1]", status="invalid" if step == 2 else "executed")
        b.observation(steps + 1, url="https://shop.example")  # the step it died in
        await store.append(b.events)
    await resume_run(store, run.run_id)
    attempts = {a.episode_id: a.finished for a in await episodes_of(store, run.run_id, every_attempt=True)}
    assert {e: (f.end_reason, f.steps) for e, f in attempts.items() if f is not None} == {
        "a": ("aborted", 2),
        "b": ("aborted", 0),
    }
