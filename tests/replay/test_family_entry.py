"""The three derived families (judge, classifier, retrieval) are driven through one library entry,
``replay.derived.run_family``, and the CLI only renders what it returns: the same store copied twice, one copy driven
through the library with the CLI's own watchers and renderers, the other through ``p2w-rt``, prints the same bytes."""

from __future__ import annotations

import asyncio
import io
import json
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from p2w_cli.render.classify_pass import ClassifyWatch
from p2w_cli.render.judge_pass import JudgeWatch
from p2w_cli.render.retrieval_cf import show_report
from p2w_cli.render.terminal import PIPE_WIDTH
from p2w_rt.cli import main
from p2w_rt.replay.classify import ClassifyOptions, classify_runs
from p2w_rt.replay.derived import FamilyReport, PassWatch, RunResult, family
from p2w_rt.replay.judges import JudgeOptions, judge_runs
from p2w_rt.replay.retrieval_cf import CounterfactualOptions, counterfactual_runs
from p2w_rt.schemas import GroundTruth, MemoryEntry
from p2w_runtime.domain import RunInfo
from p2w_runtime.store import open_store
from p2w_runtime.testing.episodes import EpisodeBuilder
from tests.helpers.classify_builders import add_run

BANK = [
    MemoryEntry(
        timestamp="2024-01-01T10:00:00", type="purchase", object="Bought trail shoes in size 9", website="s.com"
    ),
    MemoryEntry(timestamp="2024-01-02T10:00:00", type="web visit", object="Weather forecast for Denver"),
]
TRUTH = GroundTruth(website="s.com", websites=["s.com"], preferences=["size 9"])


def episode(task_id: str, recorded: int, end: str) -> EpisodeBuilder:
    b = EpisodeBuilder("fam", task_id, query="Buy shoes in my size from my usual site.", ground_truth=TRUTH, level=1)
    b.observation(1, "https://www.bing.com/")
    question = "what shoe size do I wear"
    b.retrieval(b.history_query(question, step=1), question, [BANK[recorded]], step=1, first_id=recorded)
    b.observation(2, "https://s.com/search?q=shoes+size+9")
    if end == "answered":
        b.action(2, "stop", "Trail shoes, size 9")
        b.finish("answered", "Trail shoes, size 9", steps=2)
    else:
        b.action(2, "click", "3")
        b.finish("max_steps", steps=25)
    return b


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A store holding one run of two episodes (before any pass), and the memory-bank folder its tasks read."""
    folder = tmp_path_factory.mktemp("families")
    history = folder / "history"
    history.mkdir()
    banks = {"memory_bank": [e.model_dump() for e in BANK]}
    (history / "Ann_Lee.json").write_text(json.dumps(banks), encoding="utf-8")
    db = folder / "built.db"

    async def build() -> None:
        async with open_store(db) as store:
            episodes = [episode("Ann_Lee_A2", 0, "answered"), episode("Ann_Lee_B2", 1, "max_steps")]
            await add_run(store, "fam-run", episodes, run_id="fam")

    asyncio.run(build())
    return db, history


def copy(built: tuple[Path, Path], tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.db"
    shutil.copyfile(built[0], path)
    return path


class Heard(PassWatch[Any, Any]):
    """What ``run_family`` tells a watcher, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def started(self, run: RunInfo, total: int) -> None:
        self.calls.append(("started", (run.run_id, total)))

    def outcome(self, run: RunInfo, outcome: Any) -> None:
        self.calls.append(("outcome", outcome.task_id))

    def done(self, result: RunResult[Any]) -> None:
        self.calls.append(("done", result.stream))


def _consoles() -> tuple[Console, Console]:
    return tuple(Console(file=io.StringIO(), highlight=False, soft_wrap=True, width=PIPE_WIDTH) for _ in range(2))  # type: ignore[return-value]


def _text(console: Console) -> str:
    return console.file.getvalue()  # type: ignore[attr-defined]


def _drive(db: Path, entry: Callable[[Any], Awaitable[FamilyReport[Any]]]) -> FamilyReport[Any]:
    async def go() -> FamilyReport[Any]:
        async with open_store(db) as store:
            return await entry(store)

    return asyncio.run(go())


def _cli(db: Path, tmp_path: Path, *args: str) -> tuple[int, str, str]:
    command = ["--db", str(db), "--log-file", str(tmp_path / "log"), *args]
    result = CliRunner().invoke(main, command, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_the_three_families_go_through_one_entry_and_report_the_same_shape(
    built: tuple[Path, Path], tmp_path: Path
) -> None:
    """Each family's entry is ``run_family``: its watcher hears the same sequence (started with episodes times
    producers, one outcome per episode in episode order, done with the family's stream) and it returns a
    ``FamilyReport`` of one ``RunResult`` per run, with its exit code."""
    history = built[1]
    entries: dict[str, Callable[[Any, Heard], Awaitable[FamilyReport[Any]]]] = {
        "judge": lambda s, w: judge_runs(s, ["fam-run"], JudgeOptions(judges=("rubric-rules",)), w),
        "classifier": lambda s, w: classify_runs(s, ["fam-run"], ClassifyOptions(classifier="rules"), w),
        "retrieval": lambda s, w: counterfactual_runs(
            s, ["fam-run"], CounterfactualOptions(embedder="default", history_dir=history), w
        ),
    }
    for kind, entry in entries.items():
        heard = Heard()
        report = _drive(copy(built, tmp_path, kind), lambda store, e=entry, h=heard: e(store, h))  # type: ignore[misc]
        stream = family(kind).stream.name("fam")
        assert isinstance(report, FamilyReport) and report.kind == kind
        assert [(r.run.run_id, r.run.label, r.stream) for r in report.runs] == [("fam", "fam-run", stream)], kind
        summary = report.runs[0].summary
        assert [o.task_id for o in summary.outcomes] == ["Ann_Lee_A2", "Ann_Lee_B2"], kind
        assert (summary.cached, summary.failed, report.exit_code) == (0, 0, 0), kind
        assert heard.calls == [
            ("started", ("fam", 2)),
            ("outcome", "Ann_Lee_A2"),
            ("outcome", "Ann_Lee_B2"),
            ("done", stream),
        ], kind


def test_the_cli_prints_what_rendering_the_library_report_prints(built: tuple[Path, Path], tmp_path: Path) -> None:
    """``replay --judge``, ``classify`` and ``replay --retriever`` (each ``--json``, where no timing is printed) on
    one copy of the store print, on stdout and stderr, what the library's entry rendered by the CLI's watchers and
    renderers prints on the other copy, and exit with the report's exit code."""
    history = built[1]

    judged = JudgeOptions(judges=("rubric-rules",), as_json=True)
    out, err = _consoles()
    watch = JudgeWatch(judged, out, err)
    report = _drive(copy(built, tmp_path, "judge-lib"), lambda s: judge_runs(s, ["fam-run"], judged, watch))
    cli = _cli(copy(built, tmp_path, "judge-cli"), tmp_path, "replay", "fam-run", "--judge", "rubric-rules", "--json")
    assert cli == (report.exit_code, _text(out), _text(err))
    assert len(_text(out).splitlines()) == 2 and "judged 2, cached 0, failed 0" in _text(err)

    classified = ClassifyOptions(classifier="rules", as_json=True)
    out, err = _consoles()
    cwatch = ClassifyWatch(classified, out, err)
    report = _drive(copy(built, tmp_path, "cls-lib"), lambda s: classify_runs(s, ["fam-run"], classified, cwatch))
    cli = _cli(copy(built, tmp_path, "cls-cli"), tmp_path, "classify", "fam-run", "--classifier", "rules", "--json")
    assert cli == (report.exit_code, _text(out), _text(err))
    assert len(_text(out).splitlines()) == 2 and "classified 2, cached 0, failed 0" in _text(err)

    searched = CounterfactualOptions(embedder="default", history_dir=history, as_json=True)
    out, err = _consoles()
    report = _drive(copy(built, tmp_path, "cf-lib"), lambda s: counterfactual_runs(s, ["fam-run"], searched))
    show_report(report, out, as_json=True, seconds=0.0)
    args = ("replay", "fam-run", "--retriever", "default", "--history", str(history), "--json")
    cli = _cli(copy(built, tmp_path, "cf-cli"), tmp_path, *args)
    assert cli[:2] == (report.exit_code, _text(out))
    assert len(_text(out).splitlines()) == 2
