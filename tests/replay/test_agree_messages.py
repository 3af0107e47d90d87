"""`p2w-rt agree` on a run it cannot compare says why in one line, and its hint is true for that run: a run with no
finished episode has nothing to judge (no hint to `replay` it), a run nobody judged is told how to judge it, a run
whose judgments or classifications failed how to make them again."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.testing import ScriptedLlm, Text
from tests.helpers.chinos_runs import TRUTH, build_runs


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return build_runs(
        tmp_path / "p2w.db",
        (("unfinished", TRUTH, False), ("unjudged", TRUTH, True), ("no truth", None, True)),
        empty="empty",
    )


def refused(db: Path, *args: str) -> str:
    """The one line ``agree`` ends with, non-zero."""
    result = CliRunner().invoke(main, ["--db", str(db), "agree", *args])
    assert result.exit_code == 1 and result.stdout == "" and result.stderr.count("\n") == 1, result.output
    return result.stderr.strip()


@pytest.mark.parametrize("choice", [("--judge", "rubric-rules", "--judge", "rubric-llm"), ("--human",)])
def test_a_run_without_a_finished_episode_has_nothing_to_judge(db: Path, choice: tuple[str, ...]) -> None:
    assert refused(db, *choice, "empty") == (
        "error: run empty has no episodes: nothing was judged and there is nothing to judge"
    )
    assert refused(db, *choice, "unfinished") == (
        "error: run unfinished has no finished episode (1 attempt(s) that did not finish): nothing was judged and "
        "there is nothing to judge"
    )


def test_a_run_nobody_judged_is_told_how_to_judge_it(db: Path) -> None:
    assert refused(db, "--judge", "rubric-rules@5", "--judge", "rubric-llm", "unjudged") == (
        "error: run unjudged has no current judgment by rubric-rules@5; judged by: no one (judge its episodes with "
        "p2w-rt replay unjudged --judge rubric-rules)"
    )
    assert refused(db, "--judge", "rubric-rules@9", "--judge", "rubric-llm", "unjudged").startswith(
        "error: run unjudged has no current judgment by rubric-rules@9; judged by: no one, and no installed judge is "
        "rubric-rules@9 (installed: rubric-rules, "
    ), "no version 9 of rubric-rules: the whole text names the judge, and no hint to judge with another version"
    assert refused(db, "--judge", "human:ann", "--judge", "rubric-llm", "unjudged") == (
        "error: run unjudged has no current judgment by human:ann; judged by: no one (import human labels with "
        "p2w-rt import-labels FILE)"
    )
    assert refused(db, "--judge", "classify:rules", "--judge", "rubric-llm", "unjudged") == (
        "error: run unjudged has no current classification by rules; classified by: nothing (classify its episodes "
        "with p2w-rt classify unjudged --classifier rules)"
    )


def test_a_run_whose_judgments_failed_is_told_to_retry_them(db: Path) -> None:
    judged = CliRunner().invoke(main, ["--db", str(db), "replay", "no truth", "--judge", "rubric-rules"])
    assert judged.exit_code != 0 and "has no ground truth" in judged.output  # a failed judgment, kept
    assert refused(db, "--judge", "rubric-rules", "--judge", "rubric-llm", "no truth") == (
        "error: run no truth has no current judgment by rubric-rules; judged by: no one, rubric-rules failed (judge "
        "its episodes again with p2w-rt replay 'no truth' --judge rubric-rules --retry-failed)"
    )


def test_a_run_whose_classifications_failed_is_told_to_classify_it_again(db: Path, scripted_llm: ScriptedLlm) -> None:
    scripted_llm.handle_with(lambda _: Text('{"labels": [{"label": "made_up_error"}]}'))
    llm = ("--base-url", scripted_llm.base_url, "--api-key", "k")
    classified = CliRunner().invoke(main, ["--db", str(db), "classify", "unjudged", "--classifier", "llm", *llm])
    assert "failed 1" in classified.stderr, classified.output  # a failed classification, kept
    assert refused(db, "--judge", "classify:llm", "--judge", "rubric-llm", "unjudged") == (
        "error: run unjudged has no current classification by llm; classified by: nothing, llm failed (classify its "
        "episodes again with p2w-rt classify unjudged --classifier llm)"
    )
