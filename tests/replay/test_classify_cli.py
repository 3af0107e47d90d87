"""classify through the store and the p2w-rt command: appended events, cache, --json, --summary, --plot."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.replay.classify import (
    CLASSIFIERS,
    RulesClassifier,
    classification_stream,
    read_classifications,
    read_labels,
)
from p2w_rt.replay.derived import run_pass
from p2w_runtime.domain import find_run
from p2w_runtime.store import open_store
from tests.helpers.classify_builders import act_well, add_run, ask, ask_well, builder, good_episode


def invoke(db: Path, *args: str):
    return CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)


def hallucinating(run_id: str, task_id: str):
    b = builder(run_id, task_id)
    ask_well(b)
    act_well(b, extra_param="&max_price=40")
    return b


def redundant_max_steps(run_id: str, task_id: str):
    b = builder(run_id, task_id)
    ask(b, "user preferences", [], "nothing found")
    ask(b, "user preference", [], "nothing found")
    ask_well(b)
    act_well(b, end="max_steps")
    return b


async def _build(path: Path) -> None:
    async with open_store(path) as store:
        december = [good_episode("dec", "Alex_Garcia_A1"), hallucinating("dec", "Alex_Garcia_B1")]
        await add_run(store, "december", december, run_id="dec", model="gpt-4.1", scheme="on-demand")
        march = [redundant_max_steps("mar", "Alex_Garcia_A1"), hallucinating("mar", "Alex_Garcia_B1")]
        await add_run(store, "march", march, run_id="mar", model="gpt-4.1", scheme="pre-execution")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "runs.db"
    asyncio.run(_build(path))
    return path


async def test_classifications_are_appended_then_cached_then_forced(db: Path) -> None:
    async with open_store(db) as store:
        first = await run_pass(CLASSIFIERS, store, "dec", [RulesClassifier()])
        assert (first.classified, first.cached) == (2, 0)
        head = await store.stream_head(classification_stream("dec"))
        assert head is not None and (head.last_seq, head.last_type) == (3, "streams.sealed")  # two results, a seal

        again = await run_pass(CLASSIFIERS, store, "dec", [RulesClassifier()])
        assert (again.classified, again.cached) == (0, 2)
        assert all(o.cached for o in again.outcomes)
        assert await store.stream_head(classification_stream("dec")) == head

        forced = await run_pass(CLASSIFIERS, store, "dec", [RulesClassifier()], force=True)
        assert (forced.classified, forced.cached) == (2, 0)
        records = await read_classifications(store, "dec")
        assert len(records) == 4
        assert {r.classification.episode_stream for r in records} == {"dec/Alex_Garcia_A1", "dec/Alex_Garcia_B1"}
        assert [label.label for label in records[-1].classification.labels] == ["personalization_hallucination"]

        names = await read_labels(store, "dec")  # the viewer's read: the same results, their labels' names only
        assert [(r.event_id, r.key) for r in names] == [(r.event_id, r.key) for r in records]
        assert [[x.label for x in r.classification.labels] for r in names] == [
            [x.label for x in r.classification.labels] for r in records
        ]


def test_cli_json_lines_carry_labels_and_evidence(db: Path) -> None:
    result = invoke(db, "classify", "december", "--json")
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert [(r["task_id"], r["cached"]) for r in rows] == [("Alex_Garcia_A1", False), ("Alex_Garcia_B1", False)]
    assert rows[0]["labels"] == []
    (label,) = rows[1]["labels"]
    assert label["label"] == "personalization_hallucination"
    assert label["evidence"]["text"] == "max_price=40" and len(label["evidence"]["event_ids"]) == 1

    again = invoke(db, "classify", "december")
    assert again.exit_code == 0
    assert "cached Alex_Garcia_B1  personalization_hallucination" in again.stdout
    assert "classified 0, cached 2" in again.stderr


def test_cli_summary_counts_by_model_and_scheme_and_plots(db: Path, tmp_path: Path) -> None:
    plot = tmp_path / "errors.png"
    result = invoke(db, "classify", "--summary", "--json", "--plot", str(plot), "december", "march")
    assert result.exit_code == 0, result.output
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("{")]
    summary = json.loads(line)
    groups = {g["scheme"]: g for g in summary["groups"]}
    assert set(groups) == {"on-demand", "pre-execution"}
    assert groups["on-demand"]["episodes"] == 2
    assert groups["on-demand"]["counts"]["personalization_hallucination"] == 1
    assert groups["on-demand"]["counts"]["redundant_history_access"] == 0
    assert groups["pre-execution"]["counts"] == {
        "redundant_history_access": 1,
        "personalization_hallucination": 1,
        "history_retrieval_failure": 0,
        "history_utilization_failure": 0,
        "max_steps": 1,
    }
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"plot written to {plot}" in result.stderr

    table = invoke(db, "classify", "--summary", "december", "march")
    assert "pre-execution" in table.stdout and "max_steps" in table.stdout


def test_the_chart_is_written_in_the_format_its_suffix_names(db: Path, tmp_path: Path) -> None:
    for suffix, head in ((".svg", b"<?xml"), (".pdf", b"%PDF"), (".PNG", b"\x89PNG")):
        plot = tmp_path / f"errors{suffix}"
        assert invoke(db, "classify", "--plot", str(plot), "december").exit_code == 0
        assert plot.read_bytes().startswith(head), suffix


def test_a_chart_it_cannot_write_is_refused_before_anything_is_classified(db: Path, tmp_path: Path) -> None:
    jpg, missing = tmp_path / "errors.jpg", tmp_path / "nope" / "errors.png"
    refusals = {
        jpg: f"error: --plot {jpg}: cannot write a .jpg plot; name the file .png, .svg or .pdf",
        missing: f"error: --plot {missing}: folder {missing.parent} does not exist",
    }
    for plot, line in refusals.items():
        refused = invoke(db, "classify", "--plot", str(plot), "december")
        assert (refused.exit_code, refused.stdout, refused.stderr) == (1, "", line + "\n")
        assert not plot.exists()
    assert "classified 2, cached 0" in invoke(db, "classify", "december").stderr  # nothing was classified before


def test_cli_unknown_run_is_one_line_and_nonzero(db: Path) -> None:
    result = CliRunner().invoke(main, ["--db", str(db), "classify", "april"])
    assert result.exit_code == 2
    assert result.stderr.strip().startswith("error: no run 'april'") and "Traceback" not in result.output


async def test_summary_merges_runs_of_one_configuration_unless_per_run(tmp_path: Path) -> None:
    from p2w_rt.replay.classify import summarize

    db = tmp_path / "same.db"
    async with open_store(db) as store:
        await add_run(store, "first", [hallucinating("r1", "Alex_Garcia_A1")], run_id="r1")
        await add_run(store, "second", [good_episode("r2", "Alex_Garcia_A1")], run_id="r2")
        results = [
            (await find_run(store, ref), await run_pass(CLASSIFIERS, store, ref, [RulesClassifier()]))
            for ref in ("r1", "r2")
        ]
    (merged,) = summarize(results).rows
    assert merged.runs == ["first", "second"] and merged.episodes == 2
    assert merged.counts["personalization_hallucination"] == 1
    first, second = summarize(results, per_run=True).rows
    assert (first.runs, first.counts["personalization_hallucination"]) == (["first"], 1)
    assert (second.runs, second.counts["personalization_hallucination"]) == (["second"], 0)


def test_cli_summary_keeps_a_column_per_run_of_one_configuration_unless_grouped(tmp_path: Path) -> None:
    db = tmp_path / "same.db"

    async def _same() -> None:
        async with open_store(db) as store:
            await add_run(store, "earlier", [hallucinating("r1", "Alex_Garcia_A1")], run_id="r1")
            await add_run(store, "later", [good_episode("r2", "Alex_Garcia_A1")], run_id="r2")

    asyncio.run(_same())
    per_run = invoke(db, "classify", "--summary", "--json", "earlier", "later")
    (line,) = [line for line in per_run.stdout.splitlines() if line.startswith("{")]
    groups = json.loads(line)["groups"]
    assert [(g["run"], g["counts"]["personalization_hallucination"]) for g in groups] == [("earlier", 1), ("later", 0)]
    table = invoke(db, "classify", "--summary", "earlier", "later").stdout
    header = next(line for line in table.splitlines() if "earlier" in line)
    assert "later" in header  # both run labels head their own column
    hallucination = next(line for line in table.splitlines() if "personalization_hallucination" in line)
    assert [c.strip() for c in hallucination.split("│")[2:4]] == ["1", "0"]

    merged = invoke(db, "classify", "--summary", "--json", "--group-by", "config", "earlier", "later")
    (line,) = [line for line in merged.stdout.splitlines() if line.startswith("{")]
    (group,) = json.loads(line)["groups"]
    assert (group["runs"], group["episodes"], group["counts"]["personalization_hallucination"]) == (
        ["earlier", "later"],
        2,
        1,
    )


def test_show_names_no_empty_event_list_for_a_label_without_evidence_events(tmp_path: Path) -> None:
    db = tmp_path / "never_asked.db"

    async def _never_asked() -> None:
        async with open_store(db) as store:
            b = builder("na", "Alex_Garcia_B1")
            act_well(b, extra_param="&max_price=40")  # acts on preferences it never retrieved
            await add_run(store, "never-asked", [b], run_id="na")

    asyncio.run(_never_asked())
    assert invoke(db, "classify", "never-asked").exit_code == 0
    shown = invoke(db, "show", "never-asked", "Alex_Garcia_B1").stdout
    assert "history_retrieval_failure:" in shown, shown
    assert "(events )" not in shown
    assert "(events " in shown, "labels with evidence still cite their events"


def test_classify_prints_no_blank_lines_on_stderr(db: Path) -> None:
    for args in (("--summary",), ("--json",), ()):
        result = CliRunner().invoke(main, ["--db", str(db), "classify", "december", *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        lines = result.stderr.splitlines()
        assert lines and "" not in [line.strip() for line in lines], (args, result.stderr)
        assert "december: classified" in result.stderr
