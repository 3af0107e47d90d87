"""The store test modules' shared fixtures: a sealed run to export as a bundle, and every event a row for the
modules that tamper with the ``events`` table."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from p2w_rt.schemas import NewEvent, RunFinished, uuid7
from p2w_runtime.store import _segments, open_store, seal_streams
from tests.helpers.builders import episode, run_started


@pytest.fixture
def december_db(tmp_path: Path) -> Path:
    """A finished run labelled ``december`` (three episodes), sealed the way ``record`` seals it."""
    path = tmp_path / "runs.db"

    async def make() -> None:
        async with open_store(path) as store:
            run_id = uuid7()
            await store.append([run_started(run_id, "december")])
            for task in ("Ann_Lee_A3", "Ann_Lee_B3", "Ann_Lee_C3"):
                await store.append(*episode(run_id, task))
            seals = await seal_streams(store, run_id, into=run_id)
            finished = RunFinished(status="completed", episodes=3, seals=seals)
            await store.append([NewEvent(stream=run_id, payload=finished)])

    asyncio.run(make())
    return path


@pytest.fixture(scope="module")
def events_as_rows() -> Iterator[None]:
    """Every event written as a row for the whole module, never a segment (docs/design/store.md, "Segments"): the
    tamper modules edit ``events`` rows with SQL (``pytestmark = pytest.mark.usefixtures("events_as_rows")``)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_segments, "SEGMENT_MIN_EVENTS", 10**9)
        yield
