"""Recording overhead per step of the Browser-Use integration, against the same agent unrecorded, in one run.

The same Browser-Use ``Agent`` (same settings, same Chromium, same scripted model answering at once in Browser-Use's
format) does level-0 sample tasks on the demo sites, alternately unrecorded (plain ``ChatOpenAI``, no hooks) and
recorded (``record_episode``: instrumented client, observation / rationale / action hooks, final state, SQLite).
Two figures:

- **hooks**: time inside the recording hooks per step (``StepRecorder`` timed from inside: reading back the cached
  browser state, staging observation, rationale and actions, the write's flush), which excludes the model and the
  browser by construction;
- **wall**: ms per step, recorded and unrecorded, and their ratio; it includes the instrumented transport and the
  end-of-episode final state (Playwright attaching over CDP, DOM, full-page screenshot), and Chromium's noise.

    python benchmarks/bench_browser_use.py [--rounds 3] [--tasks 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import openai
from playwright.async_api import async_playwright

from p2w_runtime.browser import find_chromium
from p2w_runtime.data import Task, load_tasks
from p2w_runtime.demo.sample import sample_checks, sample_tasks_dir
from p2w_runtime.demo.sites import start_sites
from p2w_runtime.demo.sites.catalog import host_resolver_rules
from p2w_runtime.integrations.browser_use import (
    AGENT_SETTINGS,
    StepRecorder,
    browser_use_session,
    record_episode,
    remove_agent_files,
)
from p2w_runtime.recording import open_run
from p2w_runtime.store import open_store
from p2w_runtime.testing import ScriptedLlm
from p2w_runtime.testing.browser_use_script import BrowserUseSampleScript

MODEL = "scripted-model"


class TimedSteps(StepRecorder):
    """The integration's hooks, each timed from inside; class-wide totals over every episode."""

    spent: list[float] = []
    steps = 0

    async def observe_step(self) -> None:
        started = time.perf_counter()
        await super().observe_step()
        self.spent.append(time.perf_counter() - started)

    async def on_model_output(self, state: Any, output: Any, step: int) -> None:
        started = time.perf_counter()
        await super().on_model_output(state, output, step)
        self.spent.append(time.perf_counter() - started)

    async def on_step_end(self, agent: Any) -> None:
        started = time.perf_counter()
        await super().on_step_end(agent)
        self.spent.append(time.perf_counter() - started)
        TimedSteps.steps += 1


async def unrecorded(task: Task, base_url: str, chromium: str, args: list[str]) -> int:
    """The same agent, nothing recorded; returns its steps."""
    from browser_use import Agent, ChatOpenAI

    llm = ChatOpenAI(model=MODEL, base_url=base_url, api_key="bench", temperature=0.0, frequency_penalty=None)
    async with browser_use_session(chromium, args) as session:
        agent: Agent[Any, Any] = Agent(
            task=task.intent,
            llm=llm,
            browser_session=session,
            initial_actions=[{"navigate": {"url": task.start_url, "new_tab": False}}],
            **AGENT_SETTINGS,
        )
        try:
            history = await agent.run(max_steps=10)
        finally:
            remove_agent_files(agent)
    return len(history.history)


async def measure(
    rounds: int, tasks: list[Task], base_url: str, chromium: str, args: list[str]
) -> dict[str, list[float]]:
    """Seconds per step of each episode, unrecorded and recorded, alternating task by task."""
    walls: dict[str, list[float]] = {"unrecorded": [], "recorded": []}
    client = openai.AsyncOpenAI(base_url=base_url, api_key="bench")
    with tempfile.TemporaryDirectory() as folder:
        async with open_store(Path(folder) / "bench.db") as store, async_playwright() as attach:
            for round_no in range(rounds):
                for task in tasks:
                    started = time.perf_counter()
                    steps = await unrecorded(task, base_url, chromium, args)
                    walls["unrecorded"].append((time.perf_counter() - started) / steps)
                    label = f"r{round_no}-{task.task_id}"
                    async with await open_run(
                        store, label=label, agent="browser-use", model=MODEL, tasks=[task]
                    ) as run:
                        started = time.perf_counter()
                        outcome = await record_episode(
                            run, task, client=client, model=MODEL, retriever=None, chromium=chromium,
                            chromium_args=args, max_steps=10, attach=attach, recorder=TimedSteps,
                        )  # fmt: skip
                        walls["recorded"].append((time.perf_counter() - started) / outcome.steps)
    return walls


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tasks", type=int, default=3)
    options = parser.parse_args()
    dataset = load_tasks(sample_tasks_dir())
    tasks = [t for t in dataset if t.level == 0][: options.tasks]
    sites = await start_sites(0)
    try:
        with ScriptedLlm() as model:
            model.handle_with(BrowserUseSampleScript(dataset, sample_checks()))
            args = [host_resolver_rules(sites.port)]
            walls = await measure(options.rounds, tasks, model.base_url, find_chromium(), args)
    finally:
        await sites.stop()
    hooks_per_step = sum(TimedSteps.spent) / TimedSteps.steps
    plain, recorded = statistics.median(walls["unrecorded"]), statistics.median(walls["recorded"])
    print(f"load: {os.getloadavg()[0]:.1f}; {len(tasks)} tasks x {options.rounds} rounds, median of episodes")
    print(f"hooks: {hooks_per_step * 1000:.1f} ms per step inside the recording hooks")
    print(f"wall: unrecorded {plain * 1000:.0f} ms/step, recorded {recorded * 1000:.0f} ms/step")
    print(f"overhead: {(recorded - plain) * 1000:.0f} ms/step ({recorded / plain:.2f}x)")
    print(f"hooks: {hooks_per_step / plain:.1%} of an unrecorded step")


if __name__ == "__main__":
    asyncio.run(main())
