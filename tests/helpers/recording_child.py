"""A recorder killed mid-episode (``tests/runtime/test_recording_api.py``): records task T1, starts T2, then waits to
be killed."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from p2w_runtime.recording import open_run
from p2w_runtime.store import open_store
from tests.helpers.recording_tasks import TASKS


async def main(db: Path, label: str) -> None:
    async with open_store(db) as store:
        run = await open_run(store, label=label, agent="child", model="m", tasks=TASKS)
        async with run.episode("T1") as first:
            await first.observe(url="http://shop.example/")
            await first.action("stop [done]")
            await first.end("answered", "done")
        async with run.episode("T2") as second:
            await second.observe(url="http://shop.example/")
            await second.action("click [Add to cart]")
            await second.settle()
            print("READY", flush=True)
            await asyncio.sleep(120)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2]))
