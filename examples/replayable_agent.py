"""An agent of one's own (Playwright + openai), recorded through p2w-rt's recording API, then re-executed from that
recording by p2w-rt (docs/design/replay.md):

    OPENAI_BASE_URL=... python examples/replayable_agent.py --db demo.db --label mine      # records run 'mine'
    p2w-rt --db demo.db rerun mine --exec "python examples/replayable_agent.py --db demo.db"  # identical, exit 0
    p2w-rt --db demo.db fork mine Lena_Fischer_A1 --at-step 3 --base-url URL --model M \
        --exec "python examples/replayable_agent.py --db demo.db"        # steps 3+ live, written as a new run

Re-executed, the same code runs unchanged: p2w-rt sets P2W_REPLAY, so ``instrument`` asks its replay endpoint,
``retrieve`` gets the recorded hits, the episode is compared with the recording and nothing is written.
"""

import argparse
import asyncio
import json
import re

import openai
from playwright.async_api import async_playwright

from p2w_rt.schemas import ParsedAction
from p2w_runtime.browser import LAUNCH_ARGS, find_chromium
from p2w_runtime.data import load_tasks
from p2w_runtime.demo.sample import sample_history_dir, sample_tasks_dir
from p2w_runtime.demo.sites import start_sites
from p2w_runtime.recording import instrument, open_run
from p2w_runtime.retrieval import HistoryRetriever, load_embedder
from p2w_runtime.store import open_store

ACTION = re.compile(r"Action: (\w+) \[(.*)\]", re.S)


async def main(db: str, label: str, task_id: str) -> None:
    llm = instrument(openai.AsyncOpenAI())  # OPENAI_BASE_URL, OPENAI_API_KEY
    bank = lambda: HistoryRetriever(sample_history_dir(), load_embedder())  # noqa: E731  (loaded when searched)
    sites = await start_sites()
    async with open_store(db) as store, async_playwright() as pw:
        chromium = await pw.chromium.launch(
            executable_path=find_chromium(), args=[*LAUNCH_ARGS, sites.host_resolver_rules]
        )
        tasks = [load_tasks(sample_tasks_dir()).get(task_id)]
        async with await open_run(store, label=label, agent="replayable-example", model="m", tasks=tasks) as run:
            for task in run.todo():
                page = await chromium.new_page()
                await page.goto(task.start_url)
                async with run.episode(task) as episode:
                    notes: list[str] = []
                    for _ in range(6):
                        await episode.observe(page)
                        said = f"She said: {'; '.join(notes)}\n" if notes else ""
                        text = (await page.locator("body").inner_text())[:3000]
                        prompt = f"Task: {task.intent}\n{said}Page {page.url}:\n{text}\nReply with Thought: and Action:"
                        reply = await llm.chat.completions.create(
                            model="m", messages=[{"role": "user", "content": prompt}]
                        )
                        name, arg = ACTION.search(reply.choices[0].message.content or "Action: stop []").groups()
                        await episode.action(f"{name} [{arg}]", ParsedAction(name=name, args=[arg]))
                        if name == "stop":
                            break
                        if name == "memory":
                            hits = await episode.retrieve(bank, arg)
                            ask = f"From {[h.entry.object for h in hits]}, answer: {arg}"
                            note = await llm.chat.completions.create(
                                model="m", messages=[{"role": "user", "content": ask}]
                            )
                            notes.append(note.choices[0].message.content or "")
                            await episode.memory_answer(notes[-1], [h.entry_id for h in hits])
                        elif name == "goto":
                            await page.goto(arg)
                        elif name == "open":
                            await page.locator(".item a").nth(int(arg) - 1).click()
                    await episode.final_state(page)
                    await episode.end("answered" if name == "stop" else "max_steps", arg if name == "stop" else None)
                print(json.dumps({"answer": arg if name == "stop" else None}))
        await chromium.close()
    await sites.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default="p2w.db")
    parser.add_argument("--label", default="replayable-example")
    parser.add_argument("--task", default="Lena_Fischer_A1")
    args = parser.parse_args()
    asyncio.run(main(args.db, args.label, args.task))
