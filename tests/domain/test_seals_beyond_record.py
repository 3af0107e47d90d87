"""Seals of runs that ``p2w-rt record`` did not write: an imported run is sealed as it is written, a database of the
earlier schema verifies on its run seals, runs from before seals report every event as unsealed, and a seal
appended after ``run.finished`` does not finish the run twice (issue 23)."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

from p2w_rt.schemas import uuid7
from p2w_runtime.agent import finish_run
from p2w_runtime.demo.examples import example_run_bundles
from p2w_runtime.domain import append_sealed
from p2w_runtime.store import open_store
from p2w_runtime.testing.episodes import EpisodeBuilder
from tests.helpers.builders import episode, run_started
from tests.helpers.classify_builders import add_run
from tests.helpers.paths import REPO
from tests.helpers.seals_support import (
    cli,
    copy_db,
    count,
    episode_streams,
    rows,
    run_of,
    sealed_streams,
    stream_head,
    uncovered,
    verified,
)

EPISODES_AS_ROWS = True
"""These tests read the recorded events with SQL (``conftest._episodes_as_rows``)."""
FIXTURE_V1 = REPO / "tests" / "data" / "fixture_dbs" / "v1.db"


def test_an_imported_run_seals_each_episode_as_it_is_written(tmp_path: Path) -> None:
    db = tmp_path / "ex.db"
    imported = cli(db, "import-trajectories", "--examples", "--format", "p2w-agentoccam", "--label", "ex")
    assert imported.exit_code == 0, imported.output
    run_id = run_of(db)
    attempts = episode_streams(db, run_id)
    assert len(attempts) == 3 and sealed_streams(db, run_id) == Counter(dict.fromkeys(attempts, 1))
    for stream in attempts:
        seq, head = stream_head(db, stream)
        seals = [json.loads(p)["seals"] for (p,) in rows(db, "SELECT payload FROM events WHERE type='episode.sealed'")]
        assert {"stream": stream, "events": seq, "head_hash": head} in [s for batch in seals for s in batch]
    _, report = verified(db)
    assert report["ok"] and uncovered(report, run_id) == {}


def test_a_database_of_the_earlier_schema_verifies_on_its_run_seals_alone(tmp_path: Path) -> None:
    """``tests/data/fixture_dbs/v1.db`` has no episode seals: its finished runs are covered by ``run.finished``."""
    old = copy_db(FIXTURE_V1, tmp_path / "v1.db")
    assert count(old, "SELECT count(*) FROM events WHERE type = 'episode.sealed'") == 0
    result, report = verified(old)
    assert result.exit_code == 0 and report["ok"] and len(report["uncovered"]) == 2
    assert all(tail["events"] == 0 for tail in report["uncovered"]) and "; 0 events not covered" in result.output


def test_runs_from_before_seals_report_every_event_as_unsealed(tmp_path: Path) -> None:
    """Runs that finished without seals, as runs recorded before seals did (``run.finished`` with no seals),
    next to the bundled example runs, which carry theirs."""
    db = tmp_path / "old.db"
    for bundle in example_run_bundles():
        assert cli(db, "import", str(bundle)).exit_code == 0

    async def add(label: str) -> None:
        old = EpisodeBuilder(label, "Priya_Raman_A1", query="q", start_url="http://search.p2w.test/")
        old.observation(1, "http://search.p2w.test/")
        old.action(1, "stop", "done")
        old.finish("answered", "done", steps=1)
        async with open_store(db) as store:
            await add_run(store, label, [old], run_id=label)

    asyncio.run(add("old-1"))
    asyncio.run(add("old-2"))
    result, report = verified(db)
    assert result.exit_code == 0 and report["ok"]
    lines = [line for line in result.output.splitlines() if line.startswith("unsealed: run")]
    assert len(lines) == len(report["unsealed"]) == 2 and sorted(report["unsealed"]) == ["old-1", "old-2"]
    assert all(line.endswith("; it has no seal (recorded before seals, or unfinished)") for line in lines)
    for run_id in report["unsealed"]:
        counts = dict(rows(db, "SELECT stream, count(*) FROM events WHERE stream = ? OR stream LIKE ? || '/%' "
                               "GROUP BY stream", run_id, run_id))  # fmt: skip
        assert uncovered(report, run_id) == counts, "no seal: every event of every stream is uncovered"
        assert f"{sum(counts.values())} events in {len(counts)} streams are not covered" in result.output


async def test_a_seal_after_run_finished_does_not_make_the_run_finish_twice(store) -> None:
    """A worker whose lease was taken over seals its dropped attempt after another worker finished the run; the
    next worker to reach the finish looks for any ``run.finished``, not only at the stream's last event."""
    run_id = uuid7()
    await store.append([run_started(run_id, "workers")])
    await append_sealed(store, *episode(run_id, "Ann_Lee_A3"))
    await finish_run(store, run_id)
    late = await append_sealed(store, *episode(run_id, "Ann_Lee_B3"))
    assert (await store.stream_head(run_id)).last_type == "episode.sealed", late
    await finish_run(store, run_id)
    types = [e.type async for e in store.read_stream(run_id)]
    assert types.count("run.finished") == 1 and types[-1] == "episode.sealed"
