"""Small hand-built runs for tests that need events in a store without importing or recording.

Episodes go through ``p2w_runtime.testing.episodes.EpisodeBuilder`` and so through the ``EpisodeWriter``: a test run
obeys the same episode grammar as a recorded or imported one.
"""

from __future__ import annotations

from p2w_rt.schemas import NewEvent, uuid7
from p2w_runtime.testing.episodes import EpisodeBuilder, run_finished
from p2w_runtime.testing.episodes import run_started as synthetic_run_started


def run_started(run_id: str, label: str) -> NewEvent:
    return synthetic_run_started(run_id, label, agent="test-agent", dataset="test")


def episode(
    run_id: str, task_id: str, steps: int = 3, page: bytes | None = None
) -> tuple[list[NewEvent], dict[str, bytes]]:
    """One finished episode with observations (each carrying a blob), actions and a final state."""
    page = page or f"<html>{task_id}</html>".encode()
    b = EpisodeBuilder(run_id, task_id, query=f"query of {task_id}", scheme=None, start_url="http://search.p2w.test/")
    for step in range(1, steps + 1):
        b.observation(step, f"http://shop.p2w.test/{step}", ax_tree=page)
        b.action(step, "click", str(step))
    b.final_state("http://shop.p2w.test/done", dom_html=page)
    b.finish("answered", "done", steps=steps)
    return b.events, b.blobs


async def build_run(store, label: str = "test-run", tasks: tuple[str, ...] = ("Ann_Lee_A3", "Ann_Lee_B3")) -> str:
    """Append a finished run with one episode per task; returns the run id."""
    run_id = uuid7()
    await store.append([run_started(run_id, label)])
    for task in tasks:
        events, blobs = episode(run_id, task)
        await store.append(events, blobs)
    await store.append([run_finished(run_id, len(tasks))])
    return run_id
