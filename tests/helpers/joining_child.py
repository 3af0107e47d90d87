"""A recorder that joins a run through the API (``open_run(join=True)``, ``tests/runtime/test_recording_api_join.py``):
starts an episode of its task, says READY, and on a line on its standard input ends the episode, closes and says
CLOSED with what its close returned. The run is the sample tasks' Lena_Fischer_A1 and A2, as ``record --exec
"sh wait.sh"`` records them, so that command can be asked to resume it."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from p2w_runtime.agent import COMMAND_DIGEST
from p2w_runtime.data import load_tasks
from p2w_runtime.demo.sample import sample_tasks_dir
from p2w_runtime.domain import carry_dataset
from p2w_runtime.exec._record_exec import command_digest
from p2w_runtime.recording import Recording, open_run
from p2w_runtime.store import EventStore, open_store

TASK_IDS = ("Lena_Fischer_A1", "Lena_Fischer_A2")
AGENT = "exec:wait.sh"


async def open_shared(store: EventStore, label: str, *, join: bool = False, resume: bool = False) -> Recording:
    """``open_run`` of the shared run, as every recorder of it opens it."""
    dataset = load_tasks(sample_tasks_dir())
    tasks = [dataset.get(t) for t in TASK_IDS]
    return await open_run(
        store, label=label, agent=AGENT, model="m", tasks=tasks, dataset_id=dataset.dataset_id, join=join,
        resume=resume, config={COMMAND_DIGEST: command_digest(["sh", "wait.sh"])},
        carried=carry_dataset(dataset, tasks, None),
    )  # fmt: skip


async def main(db: Path, label: str, task: str) -> None:
    async with open_store(db) as store:
        run = await open_shared(store, label, join=True)
        async with run.episode(task) as episode:
            await episode.observe(url="http://basket.p2w.test/")
            await episode.settle()
            print("READY", flush=True)
            await asyncio.to_thread(sys.stdin.readline)
            await episode.end("answered", "ok")
        finished = await run.close()
        print("CLOSED", finished.status, finished.episodes, flush=True)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2], sys.argv[3]))
