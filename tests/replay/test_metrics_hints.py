"""What `p2w-rt metrics` says of a run it has no figure for is true of that run, and its commands paste into a shell:
a run with no finished episode has nothing to judge (alone, a one-line refusal before any plot), a run nobody judged is
told the `replay` that judges it, a run whose judgments failed the `replay --retry-failed` that judges them again."""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_rt.schemas import GroundTruth, uuid7
from p2w_runtime.store import open_store
from p2w_runtime.testing.episodes import EpisodeBuilder, run_finished, run_started

TRUTH = GroundTruth(website="kohls.com", websites=["kohls.com"], preferences=["32x32"])


def _episode(run_id: str, truth: GroundTruth | None, *, finished: bool = True) -> EpisodeBuilder:
    b = EpisodeBuilder(run_id, "T1", query="Find chinos", ground_truth=truth)
    b.observation(1, "https://www.kohls.com/search?q=chinos+32x32")
    if finished:
        b.action(1, "stop", "Chinos 32x32 on kohls.com")
        b.finish("answered", "Chinos 32x32 on kohls.com", steps=1)
    return b


async def _build(db: Path) -> None:
    async with open_store(db) as store:
        empty = uuid7()
        await store.append([run_started(empty, "empty run"), run_finished(empty, 0)])
        runs = (("-unfinished", TRUTH, False), ("my run", TRUTH, True), ("a;b", None, True))
        for label, truth, finished in runs:
            run_id = uuid7()
            b = _episode(run_id, truth, finished=finished)
            await store.append([run_started(run_id, label), *b.events, *([run_finished(run_id, 1)] * finished)])


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "p2w.db"
    asyncio.run(_build(path))
    return path


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
    assert code == 1 and "a;b: judged 0, cached 1, failed 1" in err, out + err  # the same failure, counted once
