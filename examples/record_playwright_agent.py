"""Record a small hand-written Playwright agent with p2w-rt's recording API (docs/design/recording-api.md).

The agent is not p2w-rt's: it drives Chromium itself and asks its model, through a plain ``openai.AsyncOpenAI``
client, for one ``Action: name [argument]`` per step (ask the history, go to a page, open the first result, add to
the cart, stop). Recording it takes the lines marked ``# recording``: open the run and each episode, instrument the
client, and say what the agent saw, asked, did and ended with. Everything else is the agent.

    python examples/record_playwright_agent.py --db demo.db --label my-agent
    p2w-rt --db demo.db show my-agent
    p2w-rt --db demo.db replay my-agent --judge rubric-rules
    p2w-rt --db demo.db verify my-agent

Without ``--base-url`` the model is p2w-rt's scripted OpenAI-compatible server with the answers below (offline);
the demo sites are served on 127.0.0.1 and Chromium reaches them by their ``*.p2w.test`` names.
"""

from __future__ import annotations

import argparse
import asyncio
import re
from pathlib import Path

import openai
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page, async_playwright

from p2w_runtime.browser import LAUNCH_ARGS, find_chromium
from p2w_runtime.demo.sample import sample_history_dir, sample_tasks_dir
from p2w_runtime.demo.sites import start_sites
from p2w_runtime.recording import (
    EpisodeRecorder,
    HistoryRetriever,
    ParsedAction,
    instrument,
    load_embedder,
    load_tasks,
    open_run,
    open_store,
)
from p2w_runtime.testing import ScriptedLlm, Text

TASK = "Lena_Fischer_A1"
MODEL = "scripted-model"
ACTION = re.compile(r"Action:\s*(\w+)\s*\[(.*)\]\s*$", re.S)
SCRIPT = (
    Text("Thought: I need to know her diet before I shop.\nAction: memory [my dietary restrictions]"),
    Text("She has celiac disease and eats gluten-free; she buys certified organic pasta."),
    Text(
        "Thought: Basket sells groceries; search it for gluten-free organic penne.\n"
        "Action: goto [http://basket.p2w.test/search?q=gluten-free+organic+penne]"
    ),
    Text("Thought: The first result is the gluten-free organic penne.\nAction: open_result [1]"),
    Text("Thought: Two boxes, as asked.\nAction: add_to_cart [2]"),
    Text("Thought: Both boxes are in the cart.\nAction: stop [Added two boxes of gluten-free organic penne.]"),
)
"""What the scripted model answers, in order: five planner steps and one memory answer."""


async def run_agent(
    page: Page, llm: openai.AsyncOpenAI, task_intent: str, episode: EpisodeRecorder, retriever: HistoryRetriever
) -> str | None:
    """The agent: observe, ask the model, act, until it stops. Lines marked ``# recording`` are the recording."""
    memory: list[str] = []
    for _ in range(8):
        await episode.observe(page)  # recording
        text = (await page.locator("body").inner_text())[:4000]
        prompt = f"Task: {task_intent}\nKnown: {memory}\nPage {page.url}:\n{text}\nAnswer with Thought: and Action:"
        reply = await llm.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": prompt}])
        answer = reply.choices[0].message.content or ""
        found = ACTION.search(answer)
        if found is None:
            await episode.action(answer, status="invalid", error="no Action: line")  # recording
            continue
        name, arg = found.group(1), found.group(2)
        if thought := answer.split("Action:")[0].removeprefix("Thought:").strip():
            await episode.rationale(thought)  # recording
        parsed = ParsedAction(name=name, args=[arg])
        if name == "stop":
            await episode.action(found.group(0), parsed)  # recording: nothing to carry out
            return arg
        if name == "memory":
            await episode.action(found.group(0), parsed)  # recording: the question, answered below
            hits = await episode.retrieve(retriever, arg)  # recording: p2w-rt's retriever, query and hits
            entries = "; ".join(f"{h.entry.type}: {h.entry.object}" for h in hits)
            said = await llm.chat.completions.create(
                model=MODEL,
                messages=[{"role": "user", "content": f"From her history ({entries}), answer: {arg}"}],
                extra_headers={"x-p2w-role": "generator"},  # recording: the call's role
            )
            note = said.choices[0].message.content or ""
            await episode.memory_answer(note, [h.entry_id for h in hits])  # recording
            memory.append(note)
            continue
        try:
            async with episode.action(found.group(0), parsed):  # recording: outcome and duration, after it ran
                await act(page, name, arg)
        except (PlaywrightError, ValueError):
            continue  # recorded as invalid with the error; the next observation shows the page as it is
    return None


async def act(page: Page, name: str, arg: str) -> None:
    """Carry out one browser action of the agent's grammar."""
    if name == "goto":
        await page.goto(arg)
    elif name == "open_result":
        await page.locator(".item a").nth(int(arg) - 1).click(timeout=5_000)
        await page.wait_for_load_state("domcontentloaded")
    elif name == "add_to_cart":
        await page.get_by_label("Quantity").fill(arg, timeout=5_000)
        await page.get_by_role("button", name="Add to cart").click(timeout=5_000)
        await page.wait_for_load_state("domcontentloaded")
    else:
        raise ValueError(f"unknown action {name!r}")


async def record(db: Path, label: str, base_url: str, host_rules: str) -> None:
    tasks = load_tasks(sample_tasks_dir())
    retriever = HistoryRetriever(sample_history_dir(), load_embedder())
    llm = instrument(openai.AsyncOpenAI(base_url=base_url, api_key="sk-example-key-never-stored"))  # recording
    async with open_store(db) as store, async_playwright() as pw:
        chromium = await pw.chromium.launch(executable_path=find_chromium(), args=[*LAUNCH_ARGS, host_rules])
        try:
            run = await open_run(  # recording: carries the task files and memory banks
                store,
                label=label,
                agent="hand-written-playwright",
                model=MODEL,
                tasks=tasks,
                only=[TASK],
                history=sample_history_dir(),
                scheme="on-demand",
                resume=True,
            )
            async with run:  # recording: run.finished on exit
                for todo in run.todo():
                    context = await chromium.new_context()
                    page = await context.new_page()
                    await page.goto(todo.start_url)
                    async with run.episode(todo) as episode:  # recording
                        answer = await run_agent(page, llm, todo.intent, episode, retriever)
                        await episode.final_state(page)  # recording
                        await episode.end("answered" if answer else "max_steps", answer)  # recording
                    await context.close()
        finally:
            await chromium.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=Path("p2w.db"))
    parser.add_argument("--label", default="hand-written-playwright")
    parser.add_argument("--base-url", help="an OpenAI-compatible endpoint (default: the scripted server)")
    args = parser.parse_args()
    sites = await start_sites()
    try:
        if args.base_url:
            await record(args.db, args.label, args.base_url, sites.host_resolver_rules)
            return
        async with ScriptedLlm() as model:
            model.script(*SCRIPT)
            await record(args.db, args.label, model.base_url, sites.host_resolver_rules)
    finally:
        await sites.stop()
    print(f"recorded run {args.label!r} in {args.db}")


if __name__ == "__main__":
    asyncio.run(main())
