"""Per-call cost of the replay endpoint (``rerun --exec``) against the scripted server, alternated in one run.

An episode of ``--calls`` chat completions (distinct prompts of 2 KB) is recorded once through the recording API
against the scripted server. Then, in ``--rounds`` alternating rounds, the same ``openai.AsyncOpenAI`` client asks
the same requests of the scripted server (which answers at once from a rule: the baseline, an aiohttp server on
127.0.0.1 as the endpoint is) and of the replay endpoint serving that recording (fingerprint, ordinal, recorded
answer rendered). Prints the median ms per call of each, their difference and ratio.

    python benchmarks/bench_replay_endpoint.py [--calls 100] [--rounds 6]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import openai

from p2w_runtime.data import load_tasks
from p2w_runtime.demo.sample import sample_tasks_dir
from p2w_runtime.exec import EpisodeReplay, ReplayEndpoint
from p2w_runtime.recording import instrument, open_run
from p2w_runtime.rerun import load_episode
from p2w_runtime.store import open_store
from p2w_runtime.testing import ScriptedLlm, Text

PAGE = ("- link 'Gluten-free organic penne' [ref=e12]\n" * 50)[:2000]


def prompt(call: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"call {call}: {PAGE}"}]


async def record(db: Path, base_url: str, calls: int) -> str:
    """The recorded episode's stream: one observation, call and action per step."""
    task = next(iter(load_tasks(sample_tasks_dir())))
    llm = instrument(openai.AsyncOpenAI(base_url=base_url, api_key="sk-bench-key-0000"))
    async with (
        open_store(db) as store,
        await open_run(store, label="bench", agent="bench", model="m", tasks=[task]) as run,
    ):
        async with run.episode(task) as episode:
            for call in range(calls):
                await episode.observe(url=f"http://shop.example/{call}")
                await llm.chat.completions.create(model="m", messages=prompt(call))  # type: ignore[arg-type]
                await episode.action(f"click [{call}]")
            await episode.end("answered", "done")
        return episode.stream


async def ask(client: openai.AsyncOpenAI, calls: int) -> float:
    """Seconds per call for the episode's requests, in order."""
    started = time.perf_counter()
    for call in range(calls):
        await client.chat.completions.create(model="m", messages=prompt(call))  # type: ignore[arg-type]
    return (time.perf_counter() - started) / calls


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        async with ScriptedLlm() as server:
            server.handle_with(lambda _request: Text("Action: click [1]"))
            db = Path(tmp) / "bench.db"
            stream = await record(db, server.base_url, args.calls)
            async with open_store(db) as store, ReplayEndpoint() as endpoint:
                source = await load_episode(store, stream)
                scripted = openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-bench", max_retries=0)
                replayed = openai.AsyncOpenAI(base_url=f"{endpoint.url}/v1", api_key="sk-bench", max_retries=0)
                baseline: list[float] = []
                served: list[float] = []
                for round_ in range(args.rounds + 1):  # round 0 warms both connection pools
                    endpoint.episode = EpisodeReplay(source)
                    pair = [(baseline, scripted), (served, replayed)]
                    for times, client in pair if round_ % 2 else pair[::-1]:
                        seconds = await ask(client, args.calls)
                        if round_:
                            times.append(seconds)
                    assert endpoint.episode.mismatch() is None
    base, replay = statistics.median(baseline) * 1000, statistics.median(served) * 1000
    print(f"{args.calls} calls x {args.rounds} rounds, alternated; median ms per call")
    print(f"scripted server (baseline): {base:.3f} ms; replay endpoint: {replay:.3f} ms")
    print(f"replay endpoint overhead: {replay - base:+.3f} ms per call ({replay / base:.2f}x the scripted server)")


if __name__ == "__main__":
    asyncio.run(main())
