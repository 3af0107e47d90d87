"""Recording overhead per step of the public recording API, against the same agent loop unrecorded, in one run.

A step of a minimal agent: one chat completion through ``openai.AsyncOpenAI`` against the scripted server on
127.0.0.1 (answers at once), and what it would record: an observation (24 KB of AX text, a 60 KB screenshot), a
rationale, an action. Unrecorded, the loop makes the call only; recorded, the client is ``instrument``-ed and the
step goes through ``EpisodeRecorder`` into a SQLite store (write-behind, one flush per step). No browser: the
page is given as values. Prints ms per step for both, the overhead and its ratio to the unrecorded step.

    python benchmarks/bench_recording_api.py [--steps 200] [--model-ms 0]

``--model-ms`` makes the scripted model take that long per answer, as a real one does (hundreds of ms and more):
the step's write, which runs behind the agent, then hides behind the call.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx2
import openai

from p2w_rt.schemas import GroundTruth
from p2w_runtime.recording import instrument, open_run
from p2w_runtime.store import open_store
from p2w_runtime.testing import Delay, ScriptedLlm, Text


@dataclass(frozen=True)
class _Task:
    task_id: str = "T1"
    intent: str = "buy penne"
    start_url: str = "http://shop.example/"
    persona: str = "Lena_Fischer"
    query_set: str = "Lena_Fischer_A"
    level: int | None = None
    ground_truth: GroundTruth | None = None


TASKS = [_Task()]
AX = ("- link 'Gluten-free organic penne' [ref=e12]\n" * 600)[:24_000]
SHOT = os.urandom(60_000)


async def unrecorded(llm: openai.AsyncOpenAI, steps: int) -> float:
    started = time.perf_counter()
    for step in range(steps):
        await llm.chat.completions.create(model="m", messages=[{"role": "user", "content": f"step {step}: {AX[:500]}"}])
    return time.perf_counter() - started


async def recorded(llm: openai.AsyncOpenAI, steps: int, db: Path) -> float:
    async with open_store(db) as store:
        run = await open_run(store, label=db.stem, agent="bench", model="m", tasks=TASKS)
        started = time.perf_counter()
        async with run.episode("T1") as episode:
            for step in range(steps):
                await episode.observe(url=f"http://shop.example/{step}", title="Shop", ax_tree=AX, screenshot=SHOT)
                content = f"step {step}: {AX[:500]}"
                await llm.chat.completions.create(model="m", messages=[{"role": "user", "content": content}])
                await episode.rationale("the next item")
                await episode.action(f"click [{step}]")
            await episode.end("answered", "done")
        elapsed = time.perf_counter() - started
        await run.close()
    return elapsed


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--model-ms", type=float, default=0.0)
    args = parser.parse_args()
    with ScriptedLlm() as server, tempfile.TemporaryDirectory() as tmp:
        answer = Text("Action: click [1]")
        server.handle_with(lambda _request: Delay(args.model_ms / 1000, answer) if args.model_ms else answer)
        # the transport ``instrument`` wraps, so the two loops differ only by the recording
        http = httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport())
        plain = openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-bench-key-0000", http_client=http)
        await unrecorded(plain, 10)  # warm the connection pool
        base = await unrecorded(plain, args.steps)
        traced = instrument(plain)
        await recorded(traced, 10, Path(tmp) / "warm.db")
        with_recording = await recorded(traced, args.steps, Path(tmp) / "bench.db")
    per_base, per_rec = base / args.steps * 1000, with_recording / args.steps * 1000
    print(f"unrecorded step: {per_base:.2f} ms; recorded step: {per_rec:.2f} ms")
    print(f"recording overhead: {per_rec - per_base:.2f} ms per step ({per_rec / per_base:.2f}x the unrecorded step)")


if __name__ == "__main__":
    asyncio.run(main())
