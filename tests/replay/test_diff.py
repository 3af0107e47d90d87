"""diff: two runs with known flips and a known divergence, across two database files; a run against itself."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.replay.diff import MissingJudgments, StepAction, diff_runs, load_run_data
from p2w_rt.replay.diff._align import first_divergence, jaccard
from p2w_rt.replay.diff._stats import mcnemar_exact, paired_bootstrap
from p2w_rt.schemas import ForkPoint, Observation
from p2w_runtime.domain import find_run
from p2w_runtime.store import open_store
from p2w_runtime.testing.episodes import EpisodeBuilder
from tests.helpers.classify_builders import (
    KOHLS_L2,
    KOHLS_TRUTH,
    act_well,
    add_run,
    ask_well,
    builder,
    good_episode,
    wrong_size,
)

METRICS = ("p_web", "p_pref", "p_avg", "intent", "success_rate")


async def _write(path: Path, label: str, run_id: str, episodes: list[EpisodeBuilder]) -> None:
    async with open_store(path) as store:
        await add_run(store, label, episodes, run_id=run_id)


def december(run_id: str = "dec") -> list[EpisodeBuilder]:
    return [
        good_episode(run_id, "Alex_Garcia_A1"),
        wrong_size(run_id, "Alex_Garcia_B1"),
        good_episode(run_id, "Alex_Garcia_C1"),
        good_episode(run_id, "Alex_Garcia_D1"),
    ]


def march(run_id: str = "mar") -> list[EpisodeBuilder]:
    return [
        wrong_size(run_id, "Alex_Garcia_A1"),  # lost
        good_episode(run_id, "Alex_Garcia_B1", first_id=20),  # gained; other entry ids retrieved
        good_episode(run_id, "Alex_Garcia_C1"),  # the same trajectory
        good_episode(run_id, "Alex_Garcia_E1"),
    ]


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    dec, mar = tmp_path / "december.db", tmp_path / "march.db"
    asyncio.run(_write(dec, "december", "dec", december()))
    asyncio.run(_write(mar, "march", "mar", march()))
    return dec, mar


def diff_json(db: Path, a: str, b: str, *extra: str) -> dict:
    result = CliRunner().invoke(main, ["--db", str(db), "diff", a, b, "--json", *extra], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_diff_across_two_files_reports_flips_divergence_and_unmatched_tasks(files: tuple[Path, Path]) -> None:
    dec, mar = files
    out = diff_json(dec, "december", f"{mar}:march")
    assert set(out) >= {"metrics", "tasks", "only_in_a", "only_in_b", "mcnemar_p"}
    assert out["a"]["label"] == "december" and out["b"]["source"] == f"{mar}:march"
    assert out["only_in_a"] == ["Alex_Garcia_D1"] and out["only_in_b"] == ["Alex_Garcia_E1"]

    tasks = {t["task_id"]: t for t in out["tasks"]}
    assert list(tasks) == ["Alex_Garcia_A1", "Alex_Garcia_B1", "Alex_Garcia_C1"]
    assert tasks["Alex_Garcia_A1"]["flip"] == "lost" and tasks["Alex_Garcia_B1"]["flip"] == "gained"
    assert tasks["Alex_Garcia_C1"]["flip"] is None
    assert tasks["Alex_Garcia_A1"]["a"]["success"] is True and tasks["Alex_Garcia_A1"]["b"]["success"] is False
    assert tasks["Alex_Garcia_A1"]["b"]["p_pref"] == 0.75 and tasks["Alex_Garcia_A1"]["a"]["p_pref"] == 1.0
    assert out["flips"] == {"gained": ["Alex_Garcia_B1"], "lost": ["Alex_Garcia_A1"]}

    assert tasks["Alex_Garcia_A1"]["fork_step"] is None
    assert tasks["Alex_Garcia_A1"]["first_divergence"] == {
        "step": 2,
        "after_fork_step": None,
        "a_action": "type [5] [men's slim fit chinos 32x32] [1]",
        "b_action": "type [5] [men's slim fit chinos 34x30] [1]",
        "a_url": "https://www.kohls.com/",
        "b_url": "https://www.kohls.com/",
    }
    assert tasks["Alex_Garcia_C1"]["first_divergence"] is None
    assert tasks["Alex_Garcia_C1"]["retrieval_jaccard"] == 1.0
    assert tasks["Alex_Garcia_B1"]["retrieval_jaccard"] == 0.0
    assert tasks["Alex_Garcia_A1"]["websites_a"] == ["bing.com", "kohls.com"]

    for name in METRICS:
        m = out["metrics"][name]
        assert m["delta"] == pytest.approx(m["b"] - m["a"], abs=1e-6)
        assert m["ci"][0] <= m["delta"] <= m["ci"][1]
    # one lost, one gained, one unchanged: every bootstrap world where all three draws hit the loss has
    # mean -1, and that happens 1/27 > 2.5% of the time, so the interval spans [-1, 1]
    assert out["metrics"]["success_rate"] == {
        "a": pytest.approx(2 / 3, abs=1e-6),
        "b": pytest.approx(2 / 3, abs=1e-6),
        "delta": 0.0,
        "ci": [-1.0, 1.0],
    }
    assert out["metrics"]["p_pref"]["a"] == pytest.approx((1 + 0.75 + 1) / 3, abs=1e-6)
    assert out["mcnemar_p"] == 1.0
    assert out["largest_changes"][0]["delta"]["success_rate"] in (-1.0, 1.0)
    assert diff_json(dec, "december", f"{mar}:march") == out, "seeded: the same runs give the same report"


def test_a_run_diffed_against_itself_has_no_delta_and_no_divergence(files: tuple[Path, Path]) -> None:
    dec, _ = files
    out = diff_json(dec, "december", "december")
    for name in METRICS:
        assert out["metrics"][name]["delta"] == 0.0 and out["metrics"][name]["ci"] == [0.0, 0.0]
    assert all(t["first_divergence"] is None and t["flip"] is None for t in out["tasks"])
    assert len(out["tasks"]) == 4 and out["only_in_a"] == [] and out["only_in_b"] == []
    assert out["mcnemar_p"] == 1.0 and out["largest_changes"] == []


def test_the_text_report_shows_table_flips_and_divergence(files: tuple[Path, Path]) -> None:
    dec, mar = files
    result = CliRunner().invoke(
        main, ["--db", str(dec), "diff", "december", f"{mar}:march"], catch_exceptions=False, terminal_width=200
    )
    assert result.exit_code == 0, result.output
    for text in (
        "P_pref",
        "Δ (B − A)",
        "95% CI",
        "1 gained, 1 lost",
        "McNemar exact p = 1",
        "Alex_Garcia_A1 │ 2",
        "34x30] [1]",
        "only in A (1): Alex_Garcia_D1",
        "only in B (1): Alex_Garcia_E1",
    ):
        assert text in result.stdout


def test_missing_database_file_is_one_clear_line(files: tuple[Path, Path], tmp_path: Path) -> None:
    dec, _ = files
    result = CliRunner().invoke(main, ["--db", str(dec), "diff", "december", f"{tmp_path}/april.db:april"])
    assert result.exit_code == 2
    assert "april.db: no such database" in result.stderr and "Traceback" not in result.output


async def test_an_llm_judge_without_judgments_is_not_run_behind_the_users_back(files: tuple[Path, Path]) -> None:
    dec, _ = files
    async with open_store(dec) as store:
        info = await find_run(store, "december")
        with pytest.raises(MissingJudgments, match="p2w-rt replay december --judge rubric-llm"):
            await load_run_data(store, info, "rubric-llm")


async def test_episodes_without_ground_truth_are_listed_as_unscored(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    blind = builder("x", "Alex_Garcia_A1", truth=None)
    act_well(blind)
    await _write(db, "x", "x", [blind, good_episode("x", "Alex_Garcia_B1")])
    async with open_store(db) as store:
        data = await load_run_data(store, await find_run(store, "x"))
    diff = diff_runs(data, data)
    assert diff.unscored == ["Alex_Garcia_A1"] and diff.paired == 1
    assert diff.to_json()["tasks"][0]["a"] is None


def test_a_fork_is_diffed_against_its_source_from_its_fork_step(tmp_path: Path) -> None:
    db = tmp_path / "forks.db"
    source = good_episode("src", "Alex_Garcia_A1")
    at = next(e.event_id for e in source.events if isinstance(e.payload, Observation) and e.payload.step == 2)
    point = ForkPoint(source_stream=source.stream, at_step=2, source_event_id=at)
    forked = EpisodeBuilder(
        "frk",
        "Alex_Garcia_A1",
        query=KOHLS_L2,
        ground_truth=KOHLS_TRUTH,
        level=2,
        start_url="https://www.bing.com/",
        fork=point,
    )
    ask_well(forked)
    act_well(forked, size="34x30")  # live from step 2 on, the fork types another size
    asyncio.run(_write(db, "src", "src", [source, good_episode("src", "Alex_Garcia_B1")]))
    asyncio.run(_write(db, "frk", "frk", [forked]))
    (task,) = diff_json(db, "src", "frk")["tasks"]
    assert task["fork_step"] == 2
    assert task["first_divergence"] == {
        "step": 2,
        "after_fork_step": 2,
        "a_action": "type [5] [men's slim fit chinos 32x32] [1]",
        "b_action": "type [5] [men's slim fit chinos 34x30] [1]",
        "a_url": "https://www.kohls.com/",
        "b_url": "https://www.kohls.com/",
    }
    (back,) = diff_json(db, "frk", "src")["tasks"]
    assert back["fork_step"] == 2, "either side may be the fork"
    text = CliRunner().invoke(main, ["--db", str(db), "diff", "src", "frk"], env={"COLUMNS": "250"})
    assert "2 (first divergence after fork step 2)" in text.output
    assert "compared from the step they went live: Alex_Garcia_A1 after fork step 2" in text.output
    unrelated = diff_json(db, "src", "src")["tasks"]
    assert [t["fork_step"] for t in unrelated] == [None, None], "no fork, no fork step"


# --- the pieces ------------------------------------------------------------------------------------
def _actions(*texts: str) -> list[StepAction]:
    return [StepAction(i, text, f"https://x.test/{i}") for i, text in enumerate(texts, 1)]


def test_first_divergence_aligns_before_comparing() -> None:
    a = _actions("click [1]", "click [2]", "stop [x]")
    assert first_divergence(a, a) is None
    b = [
        StepAction(1, "click [1]", "https://x.test/1"),
        StepAction(2, "scroll [down]", "https://x.test/2"),
        StepAction(3, "click [2]", "https://x.test/2"),
        StepAction(4, "stop [x]", "https://x.test/3"),
    ]
    found = first_divergence(a, b)
    assert found is not None and (found.step, found.a_action, found.b_action) == (2, None, "scroll [down]")
    same_action_other_page = [StepAction(1, "click [1]", "https://elsewhere.test/1"), *a[1:]]
    moved = first_divergence(a, same_action_other_page)
    assert moved is not None and moved.step == 1 and moved.a_url == "https://x.test/1"


def test_a_forks_first_divergence_is_searched_from_its_fork_step() -> None:
    source = _actions("click [1]", "click [2]", "click [3]", "stop [x]")
    # the fork's prefix came from the source; what it did before step 3 is not the fork's doing
    fork = [StepAction(1, "scroll [down]", "https://x.test/1"), *source[1:3], StepAction(4, "stop [y]", "x")]
    unforked = first_divergence(source, fork)
    assert unforked is not None and unforked.step == 1 and unforked.after_fork_step is None
    found = first_divergence(source, fork, after_fork_step=3)
    assert found is not None and (found.step, found.a_action, found.b_action) == (4, "stop [x]", "stop [y]")
    assert found.to_json()["after_fork_step"] == 3
    assert first_divergence(source, source[:3] + [source[3]], after_fork_step=2) is None


def test_jaccard_of_retrieved_entries() -> None:
    assert jaccard(frozenset({1, 2, 3}), frozenset({2, 3, 4})) == 0.5
    assert jaccard(frozenset(), frozenset()) is None


def test_mcnemar_exact_agrees_with_scipys_binomial_test() -> None:
    """The p-value summed in integers is scipy's two-sided ``binomtest`` at p = 0.5, over every count up to 60 and a
    few large ones."""
    from scipy.stats import binomtest

    cases = [(g, lost) for g in range(31) for lost in range(31)] + [(400, 350), (1000, 1100), (7, 900)]
    for gained, lost in cases:
        if gained + lost:
            expected = binomtest(gained, gained + lost, 0.5, alternative="two-sided").pvalue
            assert mcnemar_exact(gained, lost) == pytest.approx(expected, rel=1e-9, abs=1e-300), (gained, lost)


def test_mcnemar_exact_is_a_binomial_test_of_discordant_pairs() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(1, 1) == 1.0
    assert mcnemar_exact(6, 0) == pytest.approx(2 * 0.5**6)
    assert mcnemar_exact(1, 9) == pytest.approx(2 * 11 / 1024)


def test_paired_bootstrap_is_seeded_and_paired() -> None:
    a = [[0.0, 1.0]] * 10 + [[1.0, 1.0]] * 10
    b = [[1.0, 1.0]] * 10 + [[1.0, 1.0]] * 10
    first = paired_bootstrap(a, b, resamples=2000, seed=7)
    assert first == paired_bootstrap(a, b, resamples=2000, seed=7)
    (low, high), constant = first
    assert 0.2 < low < 0.5 < high < 0.8
    assert constant == (0.0, 0.0)
    assert paired_bootstrap([], [], resamples=10) == []
