"""Small hand-built runs for tests that need events in a store without importing or recording.

Episodes go through ``p2w_runtime.testing.episodes.EpisodeBuilder`` and so through the ``EpisodeWriter``: a test run
obeys the same episode grammar as a recorded or imported one. The chinos runs (``make_run``, ``build``) are the
judge and replay tests': Persona2Web episodes at kohls.com with a memory answer the judges can score.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from p2w_rt.schemas import GroundTruth, MemoryEntry, NewEvent, uuid7
from p2w_runtime.store import open_store
from p2w_runtime.testing.episodes import EpisodeBuilder, run_finished
from p2w_runtime.testing.episodes import run_started as synthetic_run_started

CHINOS_TRUTH = GroundTruth(website="kohls.com", websites=["kohls.com"], preferences=["32x32", "$70"])


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


async def make_run(store: Any, tasks: tuple[str, ...] = ("Alex_Garcia_A1", "Alex_Garcia_B1")) -> str:
    """Append a run labelled ``llm-run`` of level-2 chinos episodes, one per task, each answered; returns its id."""
    run_id = uuid7()
    await store.append([synthetic_run_started(run_id, "llm-run")])
    for task in tasks:
        b = EpisodeBuilder(run_id, task, query="Find chinos for me", ground_truth=CHINOS_TRUTH, level=2)
        q = b.history_query("what size?", step=1)
        r = b.retrieval(q, "what size?", [MemoryEntry(timestamp="t", type="purchase", object="chinos 32x32")], step=1)
        b.memory_answer(r, "MEMORY-ANSWER-TEXT: the user wears 32x32", step=1)
        b.observation(2, "https://www.kohls.com/search?q=chinos")
        b.planner(2, "PLANNER-REASONING-TEXT: type the size")
        b.action(2, "type", "3", "chinos 32x32", "1")
        b.planner(3, "FINAL-REASONING-TEXT")
        b.action(3, "stop", "Chinos 32x32 for $59")
        b.finish("answered", "Chinos 32x32 for $59", steps=3)
        await store.append(b.events, b.blobs)
    await store.append([run_finished(run_id, len(tasks))])
    return run_id


async def _build(db: Path, label: str = "cli-run", model: str = "gpt-4.1") -> str:
    run_id = uuid7()
    async with open_store(db) as store:
        await store.append([synthetic_run_started(run_id, label, agent="agentoccam", model=model, scheme="on-demand")])
        for level, task in ((0, "Alex_Garcia_A3"), (2, "Alex_Garcia_A1"), (2, "Alex_Garcia_B1")):
            b = EpisodeBuilder(run_id, task, query="Find chinos", ground_truth=CHINOS_TRUTH, level=level)
            q = b.history_query("size?", step=1)
            entries = [MemoryEntry(timestamp="t", type="purchase", object="chinos 32x32", website="kohls.com")]
            b.memory_answer(b.retrieval(q, "size?", entries, step=1), "budget $70", step=1)
            b.observation(2, "https://www.kohls.com/search?q=chinos+32x32")
            b.action(2, "type", "1", "chinos 32x32 under $70", "1")
            if task == "Alex_Garcia_B1":
                b.finish("max_steps", steps=25)
            else:
                b.action(3, "stop", "Chinos at $59")
                b.finish("answered", "Chinos at $59", steps=3)
            await store.append(b.events, b.blobs)
        await store.append([run_finished(run_id, 3)])
    return run_id


def build(db: Path, **kwargs: str) -> str:
    """A finished run of three chinos episodes in the database file ``db`` (level 0 and 2, answered, and one that
    ran out of steps), as an AgentOccam run of ``model`` labelled ``label``; returns its id."""
    return asyncio.run(_build(db, **kwargs))
