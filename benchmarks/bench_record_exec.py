"""Overhead per step of `record --exec` against the same outside agent unrecorded, alternated in one run.

The agent is the Python example (`examples/exec_agent.py`, its own process, the openai SDK and Playwright over
CDP) on one sample task; the scripted server on 127.0.0.1 answers ``--steps`` navigations between two demo-shop
pages, then stop. Unrecorded: p2w-rt's Chromium is started (``ObservedChromium``, the start page open) and the agent
talks to the scripted server directly. Recorded: ``record_exec`` into a SQLite file, the agent's calls through the
recording proxy, the page observed before each call, navigations as actions, the final state. Each episode's wall
time (browser start to the agent's exit) over its steps is the step's time; rounds alternate, and the median of
each is printed with their ratio.

    python benchmarks/bench_record_exec.py [--steps 8] [--rounds 3] [--model-ms 0]

(The example stops itself after 10 model calls, so ``--steps`` is at most 9.)
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from playwright.async_api import async_playwright

from p2w_runtime.agent import RecordRequest
from p2w_runtime.browser import find_chromium
from p2w_runtime.data import load_tasks
from p2w_runtime.demo.sample import sample_history_dir, sample_tasks_dir
from p2w_runtime.demo.sites import DemoHosting
from p2w_runtime.exec import ObservedChromium, record_exec, run_agent
from p2w_runtime.store import open_store
from p2w_runtime.testing import Delay, ScriptedLlm, Text

REPO = Path(__file__).resolve().parents[1]
COMMAND = [sys.executable, str(REPO / "examples" / "exec_agent.py")]
TASK = "Lena_Fischer_A2"
PAGES = ("http://basket.p2w.test/search?q=penne", "http://basket.p2w.test/search?q=oat+milk")


def script(llm: ScriptedLlm, steps: int, model_ms: float) -> None:
    replies = [Text(f"Action: goto [{PAGES[i % 2]}]") for i in range(steps)] + [Text("Action: stop [done]")]
    llm.script(*(Delay(model_ms / 1000, r) if model_ms else r for r in replies))


async def unrecorded(llm: ScriptedLlm, steps: int, model_ms: float) -> float:
    task = load_tasks(sample_tasks_dir()).get(TASK)
    script(llm, steps, model_ms)
    async with DemoHosting().serving([task]) as args, async_playwright() as pw:
        started = time.perf_counter()
        async with ObservedChromium(pw, find_chromium(), args, task.start_url) as browser:
            with tempfile.TemporaryDirectory() as folder:
                task_file = Path(folder) / "task.json"
                task_file.write_text(f'{{"intent": "{task.intent}"}}')
                env = {
                    "OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "unused", "P2W_CDP_URL": browser.cdp_url,
                    "P2W_TASK_FILE": str(task_file),
                }  # fmt: skip
                ended = await run_agent(COMMAND, env, Path(folder) / "answer")
        assert ended.status == 0 and ended.answer == "done", ended
        return time.perf_counter() - started


async def recorded(llm: ScriptedLlm, steps: int, model_ms: float, db: Path) -> float:
    script(llm, steps, model_ms)
    request = RecordRequest(
        tasks_dir=sample_tasks_dir(), history_dir=sample_history_dir(), model="scripted-model", label=db.stem,
        base_url=llm.base_url, task_ids=(TASK,),
    )  # fmt: skip
    async with open_store(db) as store:
        started = time.perf_counter()
        summary = await record_exec(store, request, COMMAND, hosting=DemoHosting())
        took = time.perf_counter() - started
    (outcome,) = summary.outcomes
    assert outcome.end_reason == "answered" and outcome.steps == steps + 1, outcome
    return took


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=8, choices=range(1, 10), metavar="1..9")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--model-ms", type=float, default=0.0)
    args = parser.parse_args()
    base: list[float] = []
    rec: list[float] = []
    with tempfile.TemporaryDirectory() as folder, ScriptedLlm() as llm:
        for round_ in range(args.rounds):
            base.append(await unrecorded(llm, args.steps, args.model_ms))
            rec.append(await recorded(llm, args.steps, args.model_ms, Path(folder) / f"r{round_}.db"))
    calls = args.steps + 1
    per_base, per_rec = statistics.median(base) / calls * 1000, statistics.median(rec) / calls * 1000
    print(f"{args.rounds} rounds of {calls} model calls each, alternated (medians)")
    print(f"unrecorded step: {per_base:.1f} ms; recorded step (record --exec): {per_rec:.1f} ms")
    print(f"overhead: {per_rec - per_base:.1f} ms per step ({per_rec / per_base:.2f}x the unrecorded step)")


if __name__ == "__main__":
    asyncio.run(main())
