"""Whole payloads are checked where events arrive from outside (bundle import) and by ``verify``; a trajectory's
reader checks only the fields it keeps (docs/design/projection.md). An event with a sound hash chain around a
payload its model refuses is what these tests build."""

from __future__ import annotations

import asyncio
from pathlib import Path

import orjson
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.schemas import GENESIS_HASH, StoredEvent
from p2w_runtime.domain.trajectory import load_trajectories
from p2w_runtime.store import open_store
from p2w_runtime.testing.episodes import EpisodeBuilder, run_started
from tests.helpers.raw_sqlite import raw_sqlite


def invoke(db: Path, *args: str):
    return CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)


def _rechained(events: list[StoredEvent]) -> list[StoredEvent]:
    prev = GENESIS_HASH
    for event in events:
        event.prev_hash = prev
        event.hash = prev = event.compute_hash()
    return events


def _store_with_a_bad_payload(db: Path) -> StoredEvent:
    """A run whose one episode has an observation with a field its model does not know, correctly chained (the
    trajectory keeps every field an observation has, so a wrong-shaped known field stops reading too)."""
    run_id = "01900000-0000-7000-8000-000000000001"
    builder = EpisodeBuilder(run_id, "Ann_Lee_A1", query="find chinos")
    builder.observation(1, "https://www.kohls.com/", "Kohl's")
    builder.action(1, "stop", "done")
    builder.finish("answered", "done", steps=1)
    events = builder.sealed()
    bad = events[1]
    bad.payload_json = orjson.dumps({**orjson.loads(bad.payload_json), "zoom": [[["x"]]]}).decode()

    async def write() -> None:
        async with open_store(db) as store:
            await store.append([run_started(run_id, "december")])
            await store.append_stored(_rechained(events))

    asyncio.run(write())
    return bad


def test_verify_names_a_payload_its_model_refuses_while_trajectories_still_load(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    bad = _store_with_a_bad_payload(db)
    result = invoke(db, "verify")
    assert result.exit_code == 1
    problems = [line for line in result.output.splitlines() if line.startswith("MISMATCH")]
    assert len(problems) == 1
    expected = "payload does not validate: observation.zoom: Extra inputs are not permitted"
    assert f"seq {bad.seq} event {bad.event_id}: {expected}" in problems[0]

    async def load() -> list[str]:
        async with open_store(db) as store:
            return [
                o.url
                for t in [t async for t in load_trajectories(store, bad.stream.split("/")[0])]
                for o in t.observations
            ]

    assert asyncio.run(load()) == ["https://www.kohls.com/"]  # the reader keeps url, step, title: all sound


def test_a_bundle_carrying_a_payload_its_model_refuses_is_not_imported(tmp_path: Path) -> None:
    db, bundle, target = tmp_path / "runs.db", tmp_path / "december.p2w", tmp_path / "laptop.db"
    bad = _store_with_a_bad_payload(db)
    assert invoke(db, "export", "december", "-o", str(bundle)).exit_code == 0
    result = invoke(target, "import", str(bundle))
    assert result.exit_code != 0
    assert str(bundle) in result.output and bad.event_id in result.output
    assert "payload does not validate: observation.zoom" in result.output
    if target.exists():
        with raw_sqlite(target) as conn:
            assert conn.execute("SELECT count(*) FROM events").fetchone() == (0,)
