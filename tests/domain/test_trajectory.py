"""The trajectory projection: a pure fold of an episode's events, joined by causation, hashed by its last event."""

from __future__ import annotations

import gc
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
from pydantic import ValidationError

from p2w_rt.replay.judges import judgment_stream
from p2w_rt.schemas import (
    GroundTruth,
    HistoryRetrieval,
    Judgment,
    MemoryEntry,
    NewEvent,
    Rationale,
    RetrievalHit,
    StoredEvent,
    uuid7,
)
from p2w_runtime.domain import EpisodeGrammarError
from p2w_runtime.domain.trajectory import ProjectionError, load_trajectories, load_trajectory, project
from p2w_runtime.domain.trajectory import _load as trajectory_load
from p2w_runtime.store import MemoryEventStore, open_store
from p2w_runtime.testing.episodes import EpisodeBuilder, run_finished, run_started

TRUTH = GroundTruth(website="kohls.com", websites=["kohls.com"], preferences=["32x32", "$70"])


def seal_all(events: list[NewEvent]) -> list:
    """Decode events as a reader would get them (sealed, chained), without a store."""
    sealed, prev = [], "0" * 64
    for seq, event in enumerate(events, 1):
        stored = StoredEvent.seal(event, seq=seq, prev_hash=prev, position=seq)
        prev = stored.hash
        sealed.append(stored.decode())
    return sealed


def sample(run_id: str = "run1") -> EpisodeBuilder:
    b = EpisodeBuilder(run_id, "Alex_Garcia_A1", query="find chinos", ground_truth=TRUTH, level=2)
    b.observation(1, "https://www.bing.com/", "Bing")
    q = b.history_query("what size chinos", step=1, reason="size unknown")
    r = b.retrieval(q, "what size chinos", [MemoryEntry(timestamp="t", type="purchase", object="chinos 32x32")], step=1)
    b.memory_answer(r, "The user buys 32x32 chinos.", step=1)
    b.planner(2, "Search kohls for 32x32 chinos")
    b.action(2, "goto", "https://www.kohls.com/search?q=chinos+32x32")
    b.observation(3, "https://www.kohls.com/search?q=chinos+32x32")
    b.planner(3, "Done")
    b.action(3, "stop", "Chinos 32x32 at $59")
    b.final_state("https://www.kohls.com/search?q=chinos+32x32", "<html><body>chinos</body></html>")
    b.finish("answered", "Chinos 32x32 at $59", steps=3)
    return b


def test_projection_joins_history_by_causation_and_keeps_order() -> None:
    events = seal_all(sample().events)
    t = project(events)
    assert (t.task_id, t.level, t.ground_truth, t.run_id) == ("Alex_Garcia_A1", 2, TRUTH, "run1")
    assert len(t.history) == 1
    access = t.history[0]
    assert (access.query, access.reason, access.step) == ("what size chinos", "size unknown", 1)
    assert [h.entry.object for h in access.hits] == ["chinos 32x32"]
    assert [a.text for a in access.answers] == ["The user buys 32x32 chinos."]
    assert [r.text for r in t.planner_rationales] == ["Search kohls for 32x32 chinos", "Done"]
    assert [a.name for a in t.actions] == ["goto", "stop"]
    assert t.steps == [1, 2, 3]
    assert (t.end_reason, t.answer, t.finished) == ("answered", "Chinos 32x32 at $59", True)
    assert t.final_state is not None and t.final_state.dom_html is not None
    assert t.last_url == "https://www.kohls.com/search?q=chinos+32x32"
    assert t.hash == events[-1].hash and t.last_event_id == events[-1].event_id
    assert t.event_count == len(events)
    kinds = [type(item).__name__ for item in t.timeline]
    assert kinds[:4] == ["ObservationRecord", "HistoryAccess", "RetrievalRecord", "RationaleRecord"]


def test_retrieval_and_answer_without_causation_attach_to_latest_query() -> None:
    """Databases written before the episode grammar may hold retrievals and answers that name no cause: the
    projection still places them. The writer refuses them now, so the old shape is built as raw events."""
    b = EpisodeBuilder("run1", "Alex_Garcia_A1", ground_truth=TRUTH)
    b.history_query("first", step=None, phase="pre-execution")
    b.history_query("second", step=None, phase="pre-execution")
    with pytest.raises(EpisodeGrammarError, match="history.retrieval refused"):
        b.retrieval(None, "first", [MemoryEntry(timestamp="t", type="web visit", object="kohls")])
    hit = RetrievalHit(entry_id=0, rank=1, entry=MemoryEntry(timestamp="t", type="web visit", object="kohls"))
    old = [
        HistoryRetrieval(step=None, query="first", model_id="m", index_hash="0" * 64, k=20, threshold=0.5, hits=[hit]),
        Rationale(step=None, source="generator", text="answer without a cause"),
    ]
    t = project(seal_all([*b.events, *(NewEvent(stream=b.stream, payload=p) for p in old)]))
    assert [len(a.retrievals) for a in t.history] == [1, 0]
    assert [len(a.answers) for a in t.history] == [0, 1]


def test_projection_refuses_what_is_not_one_episode() -> None:
    events = seal_all(sample().events)
    with pytest.raises(ProjectionError, match="not episode.started"):
        project(events[1:])
    with pytest.raises(ProjectionError, match="no events"):
        project([])
    other = seal_all(sample("run2").events)
    with pytest.raises(ProjectionError, match="belongs to"):
        project([*events[:3], other[3]])


async def test_store_round_trip_and_judgments_do_not_change_the_hash() -> None:
    async with MemoryEventStore() as store:
        run_id = uuid7()
        await store.append([run_started(run_id, "r")])
        builders = [sample(run_id), EpisodeBuilder(run_id, "Alex_Garcia_B1", ground_truth=TRUTH)]
        builders[1].finish("max_steps")
        for b in builders:
            await store.append(b.events, b.blobs)
        await store.append([run_finished(run_id, 2)])
        first = [t async for t in load_trajectories(store, run_id)]
        assert [t.task_id for t in first] == ["Alex_Garcia_A1", "Alex_Garcia_B1"]
        judgment = Judgment(
            episode_stream=first[0].stream,
            task_id="Alex_Garcia_A1",
            trajectory_hash=first[0].hash,
            judge_id="x",
            judge_version="1",
            config_hash="c",
        )
        await store.append([NewEvent(stream=judgment_stream(run_id), payload=judgment)])
        again = await load_trajectory(store, first[0].stream)
        assert again.hash == first[0].hash
        assert [t.task_id async for t in load_trajectories(store, run_id)] == ["Alex_Garcia_A1", "Alex_Garcia_B1"]
        with pytest.raises(ProjectionError, match="no episode stream"):
            await load_trajectory(store, f"{run_id}/nope")


async def _stored_run(path: Path, tasks: int) -> tuple[str, list[str]]:
    async with open_store(path) as store:
        run_id = uuid7()
        await store.append([run_started(run_id, "r")])
        streams = []
        for i in range(tasks):  # task names sort the other way round from their start order
            b = EpisodeBuilder(run_id, f"Alex_Garcia_{'GFEDCBA'[i]}1", query=f"task {i}", ground_truth=TRUTH)
            b.observation(1, f"https://www.kohls.com/{i}")
            b.planner(1, f"plan {i}")
            b.action(1, "stop", f"answer {i}")
            b.finish("answered", f"answer {i}", steps=1)
            await store.append(b.events, b.blobs)
            streams.append(b.stream)
        await store.append([run_finished(run_id, tasks)])
    return run_id, streams


async def test_load_trajectories_reads_chunks_of_episodes_and_keeps_the_order_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(trajectory_load, "LOAD_CHUNK", 2)  # three chunks, the last one short
    run_id, streams = await _stored_run(tmp_path / "t.db", 5)
    async with open_store(tmp_path / "t.db") as store:
        counted = [t async for t in load_trajectories(store, run_id)]
        assert [t.query for t in counted] == [f"task {i}" for i in range(5)]  # start order, not stream-name order
        asked = [streams[3], streams[0], streams[4]]
        chunked = [t async for t in load_trajectories(store, run_id, streams=asked)]
        one_by_one = [await load_trajectory(store, stream) for stream in asked]
        assert chunked == one_by_one and [t.stream for t in chunked] == asked
        assert [t.answer for t in chunked] == ["answer 3", "answer 0", "answer 4"]
        with pytest.raises(ProjectionError, match="no episode stream"):
            [t async for t in load_trajectories(store, run_id, streams=[streams[0], f"{run_id}/nope"])]


async def test_load_trajectories_pauses_the_collector_only_while_it_folds_a_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(trajectory_load, "LOAD_CHUNK", 2)
    run_id, streams = await _stored_run(tmp_path / "t.db", 3)
    async with open_store(tmp_path / "t.db") as store:
        assert gc.isenabled()
        states = [gc.isenabled() async for _t in load_trajectories(store, run_id)]
        assert states == [True, True, True] and gc.isenabled(), "the consumer runs with the collector on"
        reader = load_trajectories(store, run_id)
        await anext(reader)
        await reader.aclose()  # a consumer that stops early
        assert gc.isenabled()
        with pytest.raises(ProjectionError):
            [t async for t in load_trajectories(store, run_id, streams=[streams[0], f"{run_id}/nope"])]
        assert gc.isenabled()
        gc.disable()
        try:
            assert len([t async for t in load_trajectories(store, run_id)]) == 3
            assert not gc.isenabled(), "a caller's disabled collector stays disabled"
        finally:
            gc.enable()


def _edit(path: Path, statement: str, *params: object) -> None:
    """Change the file as someone with sqlite3 could: past the append-only triggers."""
    conn = sqlite3.connect(path)
    conn.execute("DROP TRIGGER events_no_update")
    conn.execute("DROP TRIGGER events_delete_held")
    conn.execute(statement, params)
    conn.commit()
    conn.close()


async def test_projection_refuses_a_stream_with_an_event_missing(tmp_path: Path) -> None:
    run_id, streams = await _stored_run(tmp_path / "t.db", 2)
    _edit(tmp_path / "t.db", "DELETE FROM events WHERE stream = ? AND seq = 2", streams[1])
    async with open_store(tmp_path / "t.db") as store:
        with pytest.raises(ProjectionError, match=rf"stream {streams[1]}: event seq 3 does not follow"):
            [t async for t in load_trajectories(store, run_id)]
        assert gc.isenabled(), "the collector is on again after a fold that failed"
        with pytest.raises(ProjectionError, match="does not follow"):
            await load_trajectory(store, streams[1])
        assert (await load_trajectory(store, streams[0])).answer == "answer 0"


async def test_projection_validates_payloads_it_reads(tmp_path: Path) -> None:
    run_id, streams = await _stored_run(tmp_path / "t.db", 1)
    _edit(
        tmp_path / "t.db",
        "UPDATE events SET payload = json_set(payload, '$.step', 'one') WHERE stream = ? AND type = 'observation'",
        streams[0],
    )
    async with open_store(tmp_path / "t.db") as store:
        with pytest.raises(ValidationError, match="step"):
            [t async for t in load_trajectories(store, run_id)]


def test_decode_payload_types_the_payload_as_its_envelope_says() -> None:
    stored = StoredEvent.seal(
        NewEvent(stream="r/e", payload=Rationale(step=1, source="planner", text="x")), seq=1, prev_hash="0" * 64
    )
    assert stored.decode_payload() == stored.decode().payload == Rationale(step=1, source="planner", text="x")
    relabelled = replace(stored, type="observation")  # the payload says rationale: read as an observation, refused
    with pytest.raises(ValidationError, match="observation"):
        relabelled.decode_payload()
    unknown = replace(stored, type="no.such")
    with pytest.raises(ValueError, match="unknown event type 'no.such'"):
        unknown.decode_payload()


def test_a_slice_of_an_episode_projects_its_own_steps_and_checks_its_chain() -> None:
    from p2w_runtime.domain.trajectory import project_slice

    b = EpisodeBuilder("01slice-run", "Slice_Persona_A1", query="q")
    for step in range(1, 6):
        b.observation(step, f"https://shop.example/{step}")
        b.planner(step, f"reason {step}")
        b.action(step, "click", str(step))
    b.finish("answered", "a", steps=5)
    events = [e.decode() for e in b.sealed()]
    started, steps_3_4 = events[0], events[7:13]  # 3 events a step after episode.started
    t = project_slice(started, steps_3_4)
    assert t.steps == [3, 4] and t.task_id == "Slice_Persona_A1" and t.event_count == 7
    assert t.hash == steps_3_4[-1].hash and t.end is None
    with pytest.raises(ProjectionError, match="does not follow"):
        project_slice(started, steps_3_4[:2] + steps_3_4[3:])  # one event missing inside the slice
