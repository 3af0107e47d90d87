"""The judgments a replay stored in a database file, read back by (task, judge) for the end-to-end judge tests."""

from __future__ import annotations

import asyncio
from pathlib import Path

from p2w_rt.replay.judges import read_judgments
from p2w_rt.schemas import Judgment
from p2w_runtime.domain import list_runs
from p2w_runtime.store import open_store


def judgments(db: Path) -> dict[tuple[str, str], Judgment]:
    """The judgments of the database's first run, by (task, judge)."""

    async def read() -> dict[tuple[str, str], Judgment]:
        async with open_store(db) as store:
            (run, *_) = await list_runs(store)
            return {
                (r.judgment.task_id, r.judgment.judge_id): r.judgment for r in await read_judgments(store, run.run_id)
            }

    return asyncio.run(read())
