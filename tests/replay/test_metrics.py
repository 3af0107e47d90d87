"""Metric tables from judgments: grouping, unjudged and stale episodes, several judges, formats and the plot."""

from __future__ import annotations

from pathlib import Path

from p2w_cli.render.metrics import csv_text, level_title, markdown
from p2w_cli.render.words import counted
from p2w_rt.replay.derived import PassSettings, run_pass
from p2w_rt.replay.judges import (
    JUDGES,
    JudgmentScores,
    current_judgments,
    current_scores,
    make_judge,
    read_judgments,
    read_scores,
)
from p2w_rt.replay.metrics import (
    EpisodeScore,
    MetricRow,
    aggregate,
    collect_scores,
    level_series,
    level_ticks,
    plot_levels,
)
from p2w_rt.schemas import GroundTruth, NewEvent, Observation, uuid7
from p2w_runtime.domain import find_run
from p2w_runtime.store import MemoryEventStore
from p2w_runtime.testing.episodes import EpisodeBuilder, run_finished, run_started

TRUTH = GroundTruth(website="kohls.com", websites=["kohls.com"], preferences=["32x32"])


def score(level: int, success: float | None, judge: str = "rubric-rules", model: str = "m") -> EpisodeScore:
    metrics = None
    if success is not None:
        metrics = {"p_web": 1.0, "p_pref": 0.5, "p_avg": 0.75, "intent": success, "success": success}
    return EpisodeScore("r", "run", "agentoccam", model, "on-demand", level, f"T_{level}", judge, metrics)


def test_means_over_judged_episodes_only() -> None:
    rows = aggregate([score(0, 1.0), score(2, 0.0), score(2, None)])
    assert len(rows) == 1
    row = rows[0]
    assert dict(row.group) == {"architecture": "agentoccam", "model": "m", "scheme": "on-demand"}
    assert (row.episodes, row.judged) == (3, 2)
    assert row.figures == {"p_web": 1.0, "p_pref": 0.5, "p_avg": 0.75, "intent": 0.5, "success_rate": 0.5}


def test_several_judges_get_their_own_rows_and_webarena_has_no_rubric_figures() -> None:
    webarena = EpisodeScore(
        "r", "run", "agentoccam", "m", "on-demand", 0, "T", "webarena", {"score": 1.0, "success": 1.0}
    )
    rows = aggregate([score(0, 1.0), webarena])
    assert [dict(r.group)["judge"] for r in rows] == ["rubric-rules", "webarena"]
    assert rows[1].figures == {"p_web": None, "p_pref": None, "p_avg": None, "intent": None, "success_rate": 1.0}
    assert "| - | - | - | - | 1.000 |" in markdown(rows)


def test_level_grouping_and_csv() -> None:
    rows = aggregate([score(2, 0.0), score(0, 1.0), score(1, 1.0)], ("level",))
    assert [dict(r.group)["level"] for r in rows] == [0, 1, 2]
    header, first = csv_text(rows).splitlines()[:2]
    assert header == "level,p_web,p_pref,p_avg,intent,success_rate,judged,episodes"
    assert first == "0,1.0,0.5,0.75,1.0,1.0,1,1", "CSV holds full precision, as JSON does"


def test_plot_is_a_png(tmp_path: Path) -> None:
    rows = aggregate(
        [score(lv, s, model=m) for lv, s in ((0, 1.0), (1, 0.0), (2, 0.0)) for m in ("a", "b")], ("model", "level")
    )
    path = plot_levels(rows, tmp_path / "p.png")
    assert path.stat().st_size > 5000 and path.read_bytes()[:4] == b"\x89PNG"


def test_plot_keeps_series_with_equal_single_points_apart_and_names_only_levels_present(tmp_path: Path) -> None:
    models = [f"model-{i}" for i in range(7)]
    rows = aggregate([score(2, 1.0, model=m) for m in models] + [score(1, 0.0, model="model-0")], ("model", "level"))
    series = level_series(rows)
    assert [s.label for s in series] == models
    at_two = [x for s in series for level, x in zip(s.levels, s.xs, strict=True) if level == 2]
    assert len(set(at_two)) == 7 and all(abs(x - 2) <= 0.25 for x in at_two), "seven points, side by side at level 2"
    assert len({s.marker for s in series}) == 7
    assert level_ticks([1, 2]) == ["1", "2\n(most ambiguous)"], "no '0 = explicit' without a level 0"
    rows = [MetricRow((("judge", "j"), ("level", n)), 1, 1, {}) for n in (1, 2)]
    assert level_title(rows) == "By ambiguity level (1 = partly ambiguous, 2 = most ambiguous)"
    assert counted(1, "episode") == "1 episode" and counted(2, "memory bank") == "2 memory banks"
    assert counted(1, "task file") == "1 task file" and counted(1_000, "episode") == "1,000 episodes"
    assert level_ticks([0, 2]) == ["0\n(explicit)", "2\n(most ambiguous)"]
    assert plot_levels(rows, tmp_path / "seven.png").read_bytes()[:4] == b"\x89PNG"


async def test_stale_judgments_do_not_count() -> None:
    async with MemoryEventStore() as store:
        run_id = uuid7()
        await store.append([run_started(run_id, "m-run")])
        streams = []
        for task in ("Ann_Lee_A3", "Ann_Lee_A1"):
            b = EpisodeBuilder(run_id, task, ground_truth=TRUTH, level=int(task[-1] == "1") * 2)
            b.observation(1, "https://www.kohls.com/?size=32x32")
            b.action(1, "stop", "done")
            b.finish("answered", "done")
            await store.append(b.events)
            streams.append(b.stream)
        await store.append([run_finished(run_id, 2)])
        await run_pass(JUDGES, store, run_id, [make_judge("rubric-rules", PassSettings())])
        assert len(await current_judgments(store, run_id)) == 2
        # an episode that grows after judging (e.g. a resumed recording) is judged no more
        await store.append([NewEvent(stream=streams[1], payload=Observation(step=9, url="https://x.test/"))])
        current = await current_judgments(store, run_id)
        assert list(current) == [(streams[0], "rubric-rules")]
        scores = await collect_scores(store, [await find_run(store, "m-run")])
        assert [(s.task_id, s.level, s.metrics is not None) for s in scores] == [
            ("Ann_Lee_A3", 0, True),
            ("Ann_Lee_A1", 2, False),
        ]


async def test_scores_read_the_judgments_fields_a_table_needs() -> None:
    """``read_scores`` / ``current_scores`` (what ``metrics``, ``diff`` and AgenticShop's tables read) hold, for every
    judgment, the fields ``read_judgments`` / ``current_judgments`` give, and the same judgments count as current."""
    async with MemoryEventStore() as store:
        run_id = uuid7()
        await store.append([run_started(run_id, "m-run")])
        streams = []
        for task in ("Ann_Lee_A3", "Ann_Lee_A1"):
            b = EpisodeBuilder(run_id, task, ground_truth=TRUTH, level=2)
            b.observation(1, "https://www.kohls.com/?size=32x32")
            b.action(1, "stop", "done")
            b.finish("answered", "done")
            await store.append(b.events)
            streams.append(b.stream)
        for judge_id in ("rubric-rules", "action-wise-rules"):
            await run_pass(JUDGES, store, run_id, [make_judge(judge_id, PassSettings())])
        await store.append([NewEvent(stream=streams[1], payload=Observation(step=9, url="https://x.test/"))])

        fields = set(JudgmentScores.model_fields)
        whole = await read_judgments(store, run_id)
        scores = await read_scores(store, run_id)
        assert len(whole) == len(scores) == 4 and {r.judgment.judge_id for r in scores} == {
            "rubric-rules",
            "action-wise-rules",
        }
        for full, read in zip(whole, scores, strict=True):
            assert (read.event_id, read.key) == (full.event_id, full.key)
            assert read.judgment.model_dump() == full.judgment.model_dump(include=fields)
        for judge in (None, "rubric-rules"):
            current, current_read = (
                await current_judgments(store, run_id, judge),
                await current_scores(store, run_id, judge),
            )
            assert list(current_read) == list(current) and len(current) == (1 if judge else 2)
            assert [r.event_id for r in current_read.values()] == [r.event_id for r in current.values()]
