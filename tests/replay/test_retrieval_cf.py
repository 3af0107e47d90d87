"""`replay RUN --retriever`: recorded history queries searched again with another k / threshold, on a
hand-checked bank whose entries either state a ground-truth value or do not.

Bank of persona Ann_Lee (entry ids are positions):
  0 purchase "Bought trail running shoes in size 9" on shoes.example.com  -> states the website and `size 9`
  1 web visit "Weather forecast for Denver"                                -> states neither
  2 purchase "Bought a rain jacket rated 4.8 stars" on outdoor.example.com -> states neither
  3 search "cheap flights to Lisbon" on flights.example.com                -> states neither
Episode A2 recorded a bad retrieval (entry 3 only): recall 0/2, history_retrieval_failure.
Episode B2 recorded a good one (entry 0): recall 2/2, no failure.
threshold -1 with k 20 returns all four entries; threshold 1.01 returns none (cosine <= 1).
"""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from p2w_rt.cli import main
from p2w_rt.replay.derived import run_pass
from p2w_rt.replay.retrieval_cf import RETRIEVALS, CounterfactualRetrieval, RetrievalSettings
from p2w_rt.replay.retrieval_cf._plot import recall_by_kind
from p2w_rt.schemas import GroundTruth, MemoryEntry
from p2w_runtime.domain import RETRIEVAL_CF_SUFFIX
from p2w_runtime.retrieval import HistoryRetriever, load_embedder
from p2w_runtime.store import open_store
from p2w_runtime.testing.episodes import EpisodeBuilder
from tests.helpers.classify_builders import add_run

BANK = [
    MemoryEntry(
        timestamp="2024-01-01T10:00:00",
        type="purchase",
        object="Bought trail running shoes in size 9",
        website="shoes.example.com",
    ),
    MemoryEntry(timestamp="2024-01-02T10:00:00", type="web visit", object="Weather forecast for Denver"),
    MemoryEntry(
        timestamp="2024-01-03T10:00:00",
        type="purchase",
        object="Bought a rain jacket rated 4.8 stars",
        website="outdoor.example.com",
    ),
    MemoryEntry(
        timestamp="2024-01-04T10:00:00", type="search", object="cheap flights to Lisbon", website="flights.example.com"
    ),
]
TRUTH = GroundTruth(website="shoes.example.com", websites=["shoes.example.com"], preferences=["size 9"])
QUERY = "Buy running shoes in my usual size from the site I usually use."


def episode(task_id: str, recorded: int, run_id: str = "cf") -> EpisodeBuilder:
    """One history query whose recorded retrieval returned bank entry ``recorded`` only."""
    b = EpisodeBuilder(run_id, task_id, query=QUERY, ground_truth=TRUTH, level=1)
    b.observation(1, "https://www.bing.com/")
    question = "what shoe size do I wear and where do I buy shoes"
    b.retrieval(b.history_query(question, step=1), question, [BANK[recorded]], step=1, first_id=recorded)
    b.action(1, "stop", "done")
    b.finish("answered", "done", steps=1)
    return b


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    history = tmp_path / "history"
    history.mkdir()
    (history / "Ann_Lee.json").write_text(json.dumps({"memory_bank": [e.model_dump() for e in BANK]}), encoding="utf-8")
    db = tmp_path / "cf.db"

    async def build() -> None:
        async with open_store(db) as store:
            await add_run(store, "cf-run", [episode("Ann_Lee_A2", 3), episode("Ann_Lee_B2", 0)], run_id="cf")

    asyncio.run(build())
    return db, history


def replay(db: Path, history: Path, *args: str) -> Result:
    command = ["--db", str(db), "replay", "cf-run", "--retriever", "default", "--history", str(history), *args]
    return CliRunner().invoke(main, command, catch_exceptions=False)


def results(result: Result) -> dict[str, dict]:
    assert result.exit_code == 0, result.output
    return {row["task_id"]: row for row in map(json.loads, result.stdout.splitlines())}


def recall(row: dict, which: str) -> float:
    return sum(t[which] for t in row["targets"]) / len(row["targets"])


def test_every_entry_retrieved_finds_what_the_recording_missed(setup: tuple[Path, Path]) -> None:
    db, history = setup
    rows = results(replay(db, history, "--k", "20", "--threshold", "-1", "--json"))
    bad, good = rows["Ann_Lee_A2"], rows["Ann_Lee_B2"]
    assert (recall(bad, "recorded"), recall(bad, "counterfactual")) == (0.0, 1.0)
    assert (bad["hits_gained"], bad["hits_lost"]) == (3, 0)
    assert bad["labels_removed"] == ["history_retrieval_failure"] and bad["labels_added"] == []
    assert (recall(good, "recorded"), recall(good, "counterfactual")) == (1.0, 1.0)
    assert (good["hits_gained"], good["hits_lost"], good["labels_removed"]) == (3, 0, [])
    assert {t["name"] for t in bad["targets"]} == {"website shoes.example.com", "preference 'size 9'"}
    assert not any(t["stated_in_query"] for t in bad["targets"])


def test_nothing_retrieved_loses_what_the_recording_found(setup: tuple[Path, Path]) -> None:
    db, history = setup
    rows = results(replay(db, history, "--threshold", "1.01", "--json"))
    bad, good = rows["Ann_Lee_A2"], rows["Ann_Lee_B2"]
    assert (recall(good, "recorded"), recall(good, "counterfactual")) == (1.0, 0.0)
    assert (good["hits_gained"], good["hits_lost"]) == (0, 1)
    assert good["labels_added"] == ["history_retrieval_failure"] and good["labels_removed"] == []
    assert (recall(bad, "counterfactual"), bad["hits_lost"], bad["labels_added"], bad["labels_removed"]) == (
        0.0,
        1,
        [],
        [],
    )


def test_results_are_stored_cached_per_retriever_config_and_tabulated(setup: tuple[Path, Path]) -> None:
    db, history = setup
    plot = db.with_name("recall.png")
    first = replay(db, history, "--threshold", "-1", "--plot", str(plot))
    assert plot.read_bytes().startswith(b"\x89PNG")
    assert first.exit_code == 0, first.output
    assert "0.00" in first.output and "1.00" in first.output and "-history_retrieval_failure" in first.output
    assert "2 episodes, 4 ground-truth values: recall 0.50 recorded -> 1.00 counterfactual" in first.output
    again = results(replay(db, history, "--threshold", "-1", "--json"))
    assert all(row["cached"] for row in again.values())
    other = results(replay(db, history, "--threshold", "1.01", "--json"))
    assert not any(row["cached"] for row in other.values()), "another threshold is another cache key"

    async def stream_types() -> list[str]:
        async with open_store(db) as store:
            return [e.type async for e in store.read_stream(f"cf{RETRIEVAL_CF_SUFFIX}")]

    types = asyncio.run(stream_types())
    assert types.count("retrieval.counterfactual") == 4 and types.count("streams.sealed") == 2
    verified = CliRunner().invoke(main, ["--db", str(db), "verify", "--json"])
    assert json.loads(verified.stdout)["ok"]


def test_bad_input_is_one_line(setup: tuple[Path, Path], tmp_path: Path) -> None:
    db, _ = setup
    missing = CliRunner().invoke(main, ["--db", str(db), "replay", "cf-run", "--retriever", "default"])
    assert missing.exit_code != 0
    assert missing.stderr.strip() == (
        "error: run 'cf-run' carries no memory banks (recorded without it): attach them "
        "with `p2w-rt attach-dataset cf-run --tasks DIR --history DIR`, or pass --history DIR"
    )
    both = CliRunner().invoke(main, ["--db", str(db), "replay", "cf-run", "--retriever", "default", "--judge", "x"])
    assert both.exit_code != 0 and "give one of them" in both.output
    model = CliRunner().invoke(
        main, ["--db", str(db), "replay", "cf-run", "--retriever", str(tmp_path / "nope"), "--history", str(tmp_path)]
    )
    assert model.exit_code != 0 and len(model.stderr.strip().splitlines()) == 1


def test_the_plot_is_written_in_the_format_its_suffix_names(setup: tuple[Path, Path]) -> None:
    db, history = setup
    for suffix, head in ((".svg", b"<?xml"), (".pdf", b"%PDF"), (".PNG", b"\x89PNG")):
        plot = db.with_name(f"recall{suffix}")
        assert replay(db, history, "--threshold", "-1", "--plot", str(plot)).exit_code == 0
        assert plot.read_bytes().startswith(head), suffix


def test_a_plot_it_cannot_write_is_refused_before_any_work(setup: tuple[Path, Path]) -> None:
    db, history = setup
    jpg, missing = db.with_name("recall.jpg"), db.with_name("nope") / "recall.png"
    refusals = {
        jpg: f"error: --plot {jpg}: cannot write a .jpg plot; name the file .png, .svg or .pdf",
        missing: f"error: --plot {missing}: folder {missing.parent} does not exist",
    }
    for plot, line in refusals.items():
        refused = replay(db, history, "--threshold", "-1", "--plot", str(plot))
        assert (refused.exit_code, refused.stdout, refused.stderr) == (1, "", line + "\n")
        assert not plot.exists()

    async def results_stored() -> int:
        async with open_store(db) as store:
            return len([e async for e in store.read_stream(f"cf{RETRIEVAL_CF_SUFFIX}")])

    assert asyncio.run(results_stored()) == 0


async def test_two_concurrent_passes_evaluate_each_episode_once(setup: tuple[Path, Path]) -> None:
    db, history = setup
    embedder = await asyncio.to_thread(load_embedder, None)
    producer = CounterfactualRetrieval(RetrievalSettings(HistoryRetriever(history, embedder), 20, -1.0))
    async with open_store(db) as first, open_store(db) as second:
        done = await asyncio.gather(
            *(run_pass(RETRIEVALS, store, "cf", [producer], concurrency=1) for store in (first, second))
        )
        stored = [e.type async for e in first.read_stream(f"cf{RETRIEVAL_CF_SUFFIX}")]
    assert sorted(summary.cached for summary in done) == [0, 2], "the second pass waits, then finds both cached"
    assert stored.count("retrieval.counterfactual") == 2
    assert recall_by_kind(done[0]) == recall_by_kind(done[1]) == {"website": (0.5, 1.0), "preference": (0.5, 1.0)}


async def test_results_are_cached_for_a_copy_of_the_model_with_other_file_times(setup: tuple[Path, Path]) -> None:
    """Another machine installs the same weights at another time: its index cache differs (it is keyed by the files'
    mtimes), the results' cache key does not, so they are found instead of appended again."""
    db, history = setup
    here = await asyncio.to_thread(load_embedder, None)
    there = copy.copy(here)
    there.fingerprint = "the same files, installed at another time"
    done = []
    for embedder in (here, there):
        producer = CounterfactualRetrieval(RetrievalSettings(HistoryRetriever(history, embedder), 20, -1.0))
        async with open_store(db) as store:
            done.append(await run_pass(RETRIEVALS, store, "cf", [producer]))
    assert [summary.cached for summary in done] == [0, 2]


def test_a_failure_replayed_again_is_counted_replayed_not_cached(setup: tuple[Path, Path]) -> None:
    """Every pass tries a failed result again; the totals line and the ``cached`` of the rows say so alike."""
    db, history = setup
    unknown = EpisodeBuilder("cf2", "Ann_Lee_C2", query=QUERY, ground_truth=None, level=1)
    unknown.observation(1, "https://www.bing.com/")
    unknown.action(1, "stop", "done")
    unknown.finish("answered", "done", steps=1)

    async def build() -> None:
        async with open_store(db) as store:
            await add_run(store, "cf-two", [episode("Ann_Lee_A2", 3, "cf2"), unknown], run_id="cf2")

    asyncio.run(build())
    command = ["--db", str(db), "replay", "cf-two", "--retriever", "default", "--history", str(history)]
    first = CliRunner().invoke(main, command, catch_exceptions=False)
    assert first.exit_code == 1 and "; replayed 2, cached 0, failed 1 (" in first.stdout, first.output
    again = CliRunner().invoke(main, command, catch_exceptions=False)
    assert again.exit_code == 1 and "; replayed 1, cached 1, failed 1 (" in again.stdout, again.output
    assert "Ann_Lee_A2 (cached)" in again.stdout and "Ann_Lee_C2 (cached)" not in again.stdout
    rows = CliRunner().invoke(main, [*command, "--json"], catch_exceptions=False)
    cached = {row["task_id"]: (row["cached"], row["status"]) for row in map(json.loads, rows.stdout.splitlines())}
    assert cached == {"Ann_Lee_A2": (True, "ok"), "Ann_Lee_C2": (False, "failed")}
