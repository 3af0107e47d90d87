"""``show RUN TASK``'s timeline is read from the episode's trajectory: one row per event, in stream order, with the
event's own seq, step, type and id (``replay/timeline.py``), checked on the 48 recorded example episodes."""

from __future__ import annotations

from p2w_rt.replay.timeline import timeline
from p2w_rt.schemas import EpisodeFinished
from p2w_runtime.demo.examples import example_run_bundles
from p2w_runtime.domain import episodes_of
from p2w_runtime.domain.trajectory import load_trajectory
from p2w_runtime.store import MemoryEventStore, import_bundle


async def test_the_timeline_has_a_row_per_event_with_its_seq_step_type_and_id() -> None:
    episodes = 0
    async with MemoryEventStore() as store:
        runs = [(await import_bundle(store, bundle)).run_id for bundle in example_run_bundles()]
        for run_id in runs:
            for ref in await episodes_of(store, run_id, every_attempt=True):
                events = [stored.decode() async for stored in store.read_stream(ref.stream)]
                rows = timeline(await load_trajectory(store, ref.stream))
                assert [(r.seq, r.step, r.type, r.event_id) for r in rows] == [
                    (e.seq, getattr(e.payload, "step", None), e.type, e.event_id) for e in events
                ]
                end = events[-1].payload
                assert isinstance(end, EpisodeFinished) and rows[-1].gist.startswith(
                    f"{end.end_reason} after {end.steps} steps"
                )
                assert rows[0].gist.startswith(f"{ref.task_id} (level {ref.level}) ")
                episodes += 1
    assert episodes >= 48
