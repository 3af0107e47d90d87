"""``import-trajectories`` of many files: batched transactions (``BATCH_EVENTS``) against one file per transaction.

Writes Browser-Use trajectory files (10 steps each, a memory step first) for the real tasks of
``tests/data/persona2web/tasks`` and a memory bank per persona, then imports them into a new SQLite file with
``import_trajectories`` (what the command runs, minus start-up): once with one file per transaction (the import
before batching) and once with the default batch, alternated ``--rounds`` times. The dataset has 450 tasks, so
``--files`` over 450 are imported as several runs (labels) of up to 450 files each. Prints ms per file (wall and
CPU, medians) and the ratio.

Usage: python benchmarks/bench_import.py [--files 1000] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from p2w_runtime.importers import _run, import_trajectories
from p2w_runtime.store import open_store

TASKS = Path(__file__).resolve().parents[1] / "tests" / "data" / "persona2web" / "tasks"
STEPS = 10


def write_inputs(root: Path) -> tuple[Path, Path, int]:
    """A trajectory per task of the dataset, and the personas' memory banks; returns the number of files."""
    history, trajectories = root / "history", root / "trajectories"
    history.mkdir()
    trajectories.mkdir()
    task_ids = sorted(p.stem for p in TASKS.glob("*/*.json"))
    for persona in sorted({t.rsplit("_", 1)[0] for t in task_ids}):
        bank = [{"timestamp": f"2025-01-{1 + i % 28:02d}T10:00:00", "type": "web visit", "object": f"{persona} {i}",
                 "website": "shop.example.com"} for i in range(30)]  # fmt: skip
        (history / f"{persona}.json").write_text(json.dumps({"memory_bank": bank}))
    for n, task_id in enumerate(task_ids):
        steps: list[dict[str, object]] = [
            {"step": 1, "url": "https://www.bing.com/", "step_type": "memory", "current_observation": "Bing.",
             "memory_reason": "what does the user like?", "memory_query": f"preferences for {task_id}",
             "retrieved_memory_indices": [n % 30, (n + 7) % 30], "memory_answer": "the user likes item 3 " * 20}
        ]  # fmt: skip
        for step in range(2, STEPS):
            steps.append({"step": step, "url": f"https://shop.example.com/{task_id}/{step}", "step_type": "navigation",
                          "reason": f"step {step} of {task_id}: " + "looking at the listing " * 15,
                          "actions": [{"action": "click", "element_index": step}, {"action": "scroll"}]})  # fmt: skip
        done = [{"action": "done", "text": f"answer for {task_id}"}]
        steps.append({"step": STEPS, "url": "https://shop.example.com/done", "step_type": "navigation",
                      "reason": "found it", "actions": done})  # fmt: skip
        (trajectories / f"on_gpt41_{task_id}.json").write_text(json.dumps(steps))
    return history, trajectories, len(task_ids)


async def import_files(db: Path, history: Path, files: list[Path], per_run: int) -> tuple[float, float]:
    async with open_store(db) as store:
        wall, cpu = time.perf_counter(), time.process_time()
        for n, start in enumerate(range(0, len(files), per_run)):
            await import_trajectories(
                store, files[start : start + per_run], fmt="p2w-browser-use", tasks_dir=TASKS, history_dir=history,
                label=f"bench-{n}",
            )  # fmt: skip
        return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(30))  # no line per episode
    default = getattr(_run, "BATCH_EVENTS", 1)  # 1 (one file per transaction only) on code from before batching
    timings: dict[int, list[tuple[float, float]]] = {1: [], default: []}
    with tempfile.TemporaryDirectory() as tmp:
        history, trajectories, per_run = write_inputs(Path(tmp))
        dataset = sorted(trajectories.glob("*.json"))
        files = [dataset[i % per_run] for i in range(args.files)]  # a run never holds a task twice: cut per_run
        for r in range(args.rounds):
            for batch in sorted(timings):
                _run.BATCH_EVENTS = batch
                db = Path(tmp) / f"{batch}-{r}.db"
                timings[batch].append(asyncio.run(import_files(db, history, files, per_run)))
                db.unlink()
    print(f"load {os.getloadavg()[0]:.2f}; {args.files} files of {STEPS} steps, runs of up to {per_run} files")
    figures = {}
    for batch, runs in timings.items():
        wall = statistics.median(t[0] for t in runs) / args.files * 1e3
        cpu = statistics.median(t[1] for t in runs) / args.files * 1e3
        figures[batch] = wall, cpu
        name = "one file per transaction" if batch == 1 else f"batched (BATCH_EVENTS={batch})"
        print(f"{name:34s} {wall:6.2f} ms/file wall {cpu:6.2f} ms/file CPU")
    if default != 1:
        (w1, c1), (wb, cb) = figures[1], figures[default]
        print(f"batched / one per transaction: wall {wb / w1:.2f}x, CPU {cb / c1:.2f}x")


if __name__ == "__main__":
    main()
