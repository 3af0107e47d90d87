"""Rerun vs recording: the 24 ambiguous bundled sample episodes re-executed without browser or LLM.

Records the level-1 and level-2 sample tasks on the demo sites in headless Chromium with the scripted
OpenAI-compatible server (the baseline: what the same episodes took to record), then reruns the run
with ``p2w_runtime.rerun`` twice: retrieval searched again (the default) and ``--recorded-retrieval``.
Prints episodes/s of each (the best of ``--repeat`` reruns: the machine is shared) and the ratio to
recording; the issue expects rerun >= 50x faster. Every rerun starts with no query vector cached, as a new
``p2w-rt rerun`` process does (the embedder itself stays loaded: its load is setup, outside both figures).

    python benchmarks/bench_rerun.py [--concurrency 4] [--repeat 3] [--db PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from p2w_runtime.agent import RecordRequest, record
from p2w_runtime.data import load_tasks
from p2w_runtime.demo.sample import sample_checks, sample_history_dir, sample_tasks_dir
from p2w_runtime.demo.sites import DemoHosting
from p2w_runtime.rerun import RerunOptions, RerunReport, rerun
from p2w_runtime.retrieval import load_embedder
from p2w_runtime.store import open_store
from p2w_runtime.testing import ScriptedLlm
from p2w_runtime.testing.sample_agent import SampleAgentScript


async def bench(db: Path, concurrency: int, repeat: int) -> None:
    tasks = load_tasks(sample_tasks_dir())
    ids = tuple(t.task_id for t in tasks if t.level > 0)
    async with open_store(db) as store:
        with ScriptedLlm() as llm:
            llm.handle_with(SampleAgentScript(tasks, sample_checks()))
            request = RecordRequest(
                tasks_dir=sample_tasks_dir(),
                history_dir=sample_history_dir(),
                model="scripted-model",
                label="bench-rerun",
                base_url=llm.base_url,
                task_ids=ids,
                concurrency=concurrency,
            )
            started = time.perf_counter()
            summary = await record(store, request, hosting=DemoHosting())
            recording = time.perf_counter() - started
        n = len(summary.outcomes)
        print(f"recorded {n} episodes in {recording:.2f} s ({n / recording:.2f} episodes/s, concurrency {concurrency})")
        for name, options in (
            ("rerun, retrieval searched again", RerunOptions()),
            ("rerun, --recorded-retrieval", RerunOptions(recorded_retrieval=True)),
        ):
            best: tuple[float, float, RerunReport] | None = None
            for _ in range(repeat):
                load_embedder(None).forget_queries()
                started = time.perf_counter()
                report = await rerun(store, "bench-rerun", options)
                wall = time.perf_counter() - started
                if best is None or report.seconds < best[2].seconds:
                    best = (wall, report.seconds, report)
            assert best is not None
            wall, _, report = best
            same = sum(e.identical for e in report.episodes)
            print(
                f"{name}: {len(report.episodes)} episodes ({same} identical) in {report.seconds:.2f} s "
                f"({len(report.episodes) / report.seconds:.1f} episodes/s; {wall:.2f} s with setup): "
                f"{recording / report.seconds:.0f}x faster than recording ({recording / wall:.0f}x with setup)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3, help="Reruns of each kind; the fastest is shown.")
    parser.add_argument("--db", type=Path, help="Keep the store here (default: a temporary folder).")
    args = parser.parse_args()
    if args.db:
        asyncio.run(bench(args.db, args.concurrency, args.repeat))
        return
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(bench(Path(tmp) / "bench.db", args.concurrency, args.repeat))


if __name__ == "__main__":
    main()
