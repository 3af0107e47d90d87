"""Overhead per step of the recording API's documented usage on a real page, against the same agent unrecorded.

The agent is the example's (``examples/record_playwright_agent.py``) reduced to its browser loop: on the demo
sites in Chromium it reads the page text, asks its model (``openai.AsyncOpenAI`` against the scripted server on
127.0.0.1), then acts: search, open the first result, add two to the cart, back to the start page. Recorded, each
step also calls ``episode.observe(page)`` before reading and wraps the action in ``async with episode.action(...)``
through an ``instrument``-ed client into SQLite, as the example does. Recorded and unrecorded episodes alternate in
one run (the machine's load falls on both); prints the median ms per step of each, the overhead and its ratio, and
the median of the paired differences (a step against the same step of the unrecorded episode just before it).

    python benchmarks/bench_recording_page.py [--rounds 8] [--model-ms 0] [--screenshots changed]

``--model-ms`` makes the model take that long per answer, as a real one does: the page read runs behind it.
``--read-first`` waits for the page read right after ``observe`` (``episode.settle()``), as ``observe`` did before it
read behind the agent: the same run's figure for the read on the agent's path.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import get_args

import httpx2
import openai
from playwright.async_api import Browser, Page, async_playwright

from p2w_runtime.browser import LAUNCH_ARGS, find_chromium
from p2w_runtime.demo.sample import sample_tasks_dir
from p2w_runtime.demo.sites import start_sites
from p2w_runtime.recording import (
    EpisodeRecorder,
    ParsedAction,
    ScreenshotPolicy,
    instrument,
    load_tasks,
    open_run,
    open_store,
)
from p2w_runtime.testing import Delay, ScriptedLlm, Text

TASK = "Lena_Fischer_A1"
ACTIONS = (
    ("goto", "http://basket.p2w.test/search?q=gluten-free+organic+penne"),
    ("open_result", "1"),
    ("add_to_cart", "2"),
    ("goto", ""),
)
"""One episode's steps; an empty ``goto`` goes back to the task's start page."""


async def act(page: Page, name: str, arg: str, start_url: str) -> None:
    if name == "goto":
        await page.goto(arg or start_url)
    elif name == "open_result":
        await page.locator(".item a").nth(int(arg) - 1).click()
        await page.wait_for_load_state("domcontentloaded")
    else:
        await page.get_by_label("Quantity").fill(arg)
        await page.get_by_role("button", name="Add to cart").click()
        await page.wait_for_load_state("domcontentloaded")


async def step(page: Page, llm: openai.AsyncOpenAI, name: str, arg: str, start_url: str) -> None:
    """The agent's own work of one step: read the page, ask the model (the action is fixed here)."""
    text = (await page.locator("body").inner_text())[:4000]
    await llm.chat.completions.create(model="m", messages=[{"role": "user", "content": f"Page {page.url}:\n{text}"}])


async def episode(
    browser: Browser,
    llm: openai.AsyncOpenAI,
    start_url: str,
    recorder: EpisodeRecorder | None,
    shots: ScreenshotPolicy,
    read_first: bool,
) -> list[float]:
    """Milliseconds of each step, from before the observation to after the action."""
    page = await browser.new_page()
    await page.goto(start_url)
    times = []
    for name, arg in ACTIONS:
        started = time.perf_counter()
        if recorder is None:
            await step(page, llm, name, arg, start_url)
            await act(page, name, arg, start_url)
        else:
            await recorder.observe(page, screenshots=shots)
            if read_first:
                await recorder.settle()
            await step(page, llm, name, arg, start_url)
            async with recorder.action(f"{name} [{arg}]", ParsedAction(name=name, args=[arg])):
                await act(page, name, arg, start_url)
        times.append((time.perf_counter() - started) * 1000)
    await page.close()
    return times


async def bench(
    rounds: int, model_ms: float, shots: ScreenshotPolicy, read_first: bool, db: Path
) -> tuple[list[float], list[float]]:
    tasks = load_tasks(sample_tasks_dir())
    start_url = tasks.get(TASK).start_url
    sites = await start_sites()
    plain_ms: list[float] = []
    recorded_ms: list[float] = []
    try:
        with ScriptedLlm() as server:
            answer = Text("Thought: next.\nAction: click [1]")
            server.handle_with(lambda _request: Delay(model_ms / 1000, answer) if model_ms else answer)
            http = httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport())  # one HTTP stack for both loops
            plain = openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-bench-key-0000", http_client=http)
            traced = instrument(plain)
            async with open_store(db) as store, async_playwright() as pw:
                args = [*LAUNCH_ARGS, sites.host_resolver_rules]
                browser = await pw.chromium.launch(executable_path=find_chromium(), args=args)
                run = await open_run(store, label="bench", agent="bench", model="m", tasks=tasks, only=[TASK])
                async with run:
                    for round_ in range(rounds + 1):  # round 0 warms both
                        unrecorded = await episode(browser, plain, start_url, None, shots, read_first)
                        async with run.episode(TASK) as recorder:
                            recorded = await episode(browser, traced, start_url, recorder, shots, read_first)
                            await recorder.end("answered", "done")
                        if round_:
                            plain_ms += unrecorded
                            recorded_ms += recorded
                await browser.close()
    finally:
        await sites.stop()
    return plain_ms, recorded_ms


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--model-ms", type=float, default=0.0)
    parser.add_argument("--screenshots", choices=get_args(ScreenshotPolicy), default="changed")
    parser.add_argument("--read-first", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        plain, recorded = await bench(
            args.rounds, args.model_ms, args.screenshots, args.read_first, Path(tmp) / "bench.db"
        )
    base, with_recording = statistics.median(plain), statistics.median(recorded)
    read = ", read first" if args.read_first else ""
    print(f"{len(plain)} steps each, alternated; screenshots={args.screenshots}{read}, model {args.model_ms:g} ms")
    print(f"unrecorded step: {base:.1f} ms median; recorded step: {with_recording:.1f} ms median")
    print(
        f"recording overhead: {with_recording - base:.1f} ms per step "
        f"({with_recording / base:.2f}x the unrecorded step)"
    )
    paired = statistics.median(r - p for p, r in zip(plain, recorded, strict=True))
    print(f"paired (same step, same round): median overhead {paired:.1f} ms ({(base + paired) / base:.2f}x)")


if __name__ == "__main__":
    asyncio.run(main())
