"""Record the two bundled example runs the demo starts from: an "earlier" and a "later" run of the sample tasks.

Both are real recordings (headless Chromium on the demo sites, the retriever, the store) with the scripted
OpenAI-compatible endpoint standing in for the model. Most episodes do what the task asks (the item in the cart, the
reservation details open, the ticket checkout reached); the slips make some fail as real runs do. The earlier run
slips on five query sets (another shop, no history, the wrong item, stopping on the results, the bot wall), the
later one on two (the same other shop, the bot wall on another task), so judging, classifying and diffing them
shows what got better and what got worse. Re-run after changing the agent or the sites:

    python scripts/make_example_runs.py [--out p2w_runtime/demo/examples/runs]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

from p2w_runtime.agent import AgentConfig, RecordRequest, record
from p2w_runtime.data import load_tasks
from p2w_runtime.demo.sample import sample_checks, sample_history_dir, sample_tasks_dir
from p2w_runtime.demo.sites import DemoHosting
from p2w_runtime.store import export_bundle, open_store
from p2w_runtime.testing import ScriptedLlm
from p2w_runtime.testing.sample_agent import EXAMPLE_RUN_SLIPS, SampleAgentScript

MODEL = "scripted-gpt"


async def make(out: Path) -> None:
    tasks = load_tasks(sample_tasks_dir())
    ambiguous = tuple(t.task_id for t in tasks if t.level > 0)  # level 0 states everything: nothing to personalize
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "examples.db"
        for label, slips in EXAMPLE_RUN_SLIPS.items():
            with ScriptedLlm(models=(MODEL,)) as llm:
                llm.handle_with(SampleAgentScript(tasks, sample_checks(), slips))
                request = RecordRequest(
                    tasks_dir=sample_tasks_dir(),
                    history_dir=sample_history_dir(),
                    model=MODEL,
                    label=label,
                    base_url=llm.base_url,
                    api_key="sk-example",
                    concurrency=2,
                    task_ids=ambiguous,
                    config=AgentConfig(scheme="on-demand"),
                )
                async with open_store(db) as store:
                    summary = await record(store, request, hosting=DemoHosting())
                    bundle = await export_bundle(store, summary.run_id, out / f"{label}.p2w", force=True)
            print(
                f"{label}: {len(summary.outcomes)} episodes, {bundle.events} events, {bundle.blobs} blobs "
                f"-> {out / f'{label}.p2w'}"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_out = Path(__file__).resolve().parents[1] / "p2w_runtime/demo/examples/runs"
    parser.add_argument("--out", type=Path, default=default_out)
    asyncio.run(make(parser.parse_args().out))
