"""What `p2w-rt metrics` says of a run it has no figure for is true of that run, and its commands paste into a shell:
a run with no finished episode has nothing to judge (alone, a one-line refusal before any plot), a run nobody judged is
told the `replay` that judges it, a run whose judgments failed the `replay --retry-failed` that judges them again."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from tests.helpers.chinos_runs import TRUTH, build_runs


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return build_runs(
        tmp_path / "p2w.db",
        (("-unfinished", TRUTH, False), ("my run", TRUTH, True), ("a;b", None, True)),
        empty="empty run",
    )


def invoke(db: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def pasted(db: Path, line: str) -> tuple[int, str, str]:
    """Run the command a hint ends with as a shell would split it."""
    words = shlex.split(line[line.index("p2w-rt ") :])
    assert words[0] == "p2w-rt"
    return invoke(db, *words[1:])


def test_runs_without_a_finished_episode_are_refused_in_one_line_before_the_plot(db: Path) -> None:
    plot = db.with_name("levels.png")
    code, out, err = invoke(db, "metrics", "--plot", str(plot), "empty run")
    assert (code, out, err) == (
        1,
        "",
        "error: run 'empty run' has no episodes: nothing was judged and there is nothing to judge\n",
    )
    assert not plot.exists()
    code, out, err = invoke(db, "metrics", "--format", "csv", "empty run", "--", "-unfinished")
    assert (code, out) == (1, "")
    assert err == (
        "error: run 'empty run' has no episodes; run -unfinished has no finished episode (1 attempt(s) that did not "
        "finish): nothing was judged and there is nothing to judge\n"
    )


def test_a_run_nobody_judged_is_told_the_replay_that_judges_it(db: Path) -> None:
    code, out, err = invoke(db, "metrics", "my run", "empty run")
    assert code == 0 and "0/1" in out
    assert err.splitlines() == [
        "run 'empty run' has no episodes: nothing to judge, so no row",
        "my run: no judgment yet: judge its episodes with p2w-rt replay 'my run' --judge ID",
    ]
    code, _, err = invoke(db, "metrics", "my run", "--judge", "rubric-rules", "--format", "json")
    hint = (
        "my run: no judgment by rubric-rules yet: judge its episodes with p2w-rt replay 'my run' --judge rubric-rules"
    )
    assert (code, err) == (0, hint + "\n")
    assert pasted(db, hint)[0] == 0
    code, out, err = invoke(db, "metrics", "my run", "--judge", "rubric-rules")
    assert (code, err) == (0, "") and "1/1" in out


def test_a_run_whose_judgments_failed_is_told_to_retry_them(db: Path) -> None:
    code, out, _ = invoke(db, "replay", "a;b", "--judge", "rubric-rules")
    assert code == 1 and "has no ground truth" in out  # a failed judgment, kept
    code, _, err = invoke(db, "metrics", "a;b")
    (hint,) = err.splitlines()
    assert code == 0 and hint == (
        "a;b: no judgment of its episodes, rubric-rules failed on them: judge them again with p2w-rt replay 'a;b' "
        "--judge rubric-rules --retry-failed"
    )
    code, out, err = pasted(db, hint)
    assert code == 1 and "a;b: judged 1, cached 0, failed 1" in err, out + err  # judged again: the same failure, once
