"""``show RUN`` lists a run's episodes from their references alone: ``episode.started`` and ``episode.finished``.

One 200,000-step episode made the listing read 400,000 events (27.5 s, 2.1 GB; ``benchmarks/bench_show.py``
measures the command). Here the middle of an episode holds an event no reader of today can decode (a type from a
future version, imported from a bundle): the listing never touches it, so it cannot fail on it. The end the
listing shows (reason, steps, answer) is the ``episode.finished`` payload the reference carries.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.schemas import StoredEvent, uuid7
from p2w_runtime.domain import episodes_of
from p2w_runtime.store import open_store
from p2w_runtime.testing.episodes import EpisodeBuilder, run_finished, run_started


async def _run_with_an_unreadable_middle(db: Path) -> str:
    run_id = uuid7()
    episode = EpisodeBuilder(run_id, "Ann_Lee_A1", query="find the usual chinos", level=2)
    episode.observation(1, "https://shop.example/1")
    episode.finish("max_steps", answer="none of them fit", steps=7)
    started, observation, _ = episode.sealed()
    future = StoredEvent(
        event_id=uuid7(), stream=episode.stream, seq=2, position=None, type="observation.v9", schema_version=1,
        recorded_at=observation.recorded_at, causation_id=None, payload_json='{"new":"shape"}', blobs=[],
        prev_hash=started.hash, hash="",
    )  # fmt: skip
    future.hash = future.compute_hash()
    last = StoredEvent.seal(episode.events[-1], seq=3, prev_hash=future.hash)  # episode.finished after it
    async with open_store(db) as store:
        await store.append([run_started(run_id, "future")])
        assert await store.append_stored([started, future, last]) == 3
        await store.append([run_finished(run_id, 1)])
        (ref,) = await episodes_of(store, run_id)
        assert ref.finished is not None and (ref.task_id, ref.finished.steps) == ("Ann_Lee_A1", 7)
    return run_id


def test_listing_reads_only_the_start_and_end_of_each_episode(tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    asyncio.run(_run_with_an_unreadable_middle(db))
    result = CliRunner().invoke(main, ["--db", str(db), "show", "future", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    (line,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert (line["task_id"], line["level"], line["end_reason"]) == ("Ann_Lee_A1", 2, "max_steps")
    assert (line["steps"], line["answer"]) == (7, "none of them fit"), "the JSON lines carry what the table shows"
    result = CliRunner().invoke(main, ["--db", str(db), "show", "future"], catch_exceptions=False)
    assert result.exit_code == 0 and "max_steps" in result.stdout and "7" in result.stdout
    assert "none of them fit" in result.stdout


def test_a_long_answer_is_clipped_with_an_ellipsis_and_its_length(tmp_path: Path) -> None:
    db = tmp_path / "p2w.db"
    run_id = uuid7()
    answer = "The best match is the Meadow and Co organic gluten-free brown rice penne, 16 oz, at basket"
    episode = EpisodeBuilder(run_id, "Ann_Lee_A1", query="find the usual penne", level=2)
    episode.finish("answered", answer=answer, steps=3)

    async def build() -> None:
        async with open_store(db) as store:
            await store.append([run_started(run_id, "long"), *episode.events, run_finished(run_id, 1)])

    asyncio.run(build())
    result = CliRunner().invoke(main, ["--db", str(db), "show", "long"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert f"{answer[:60]}… ({len(answer)} characters)" in result.stdout
