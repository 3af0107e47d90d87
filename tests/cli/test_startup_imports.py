"""What ``p2w-rt --help``, ``runs`` and ``show`` load: none of the heavy libraries another command needs.

Each command runs in a fresh interpreter (``import cli; cli.main([...])``, as the ``p2w-rt`` script does) and reports
``sys.modules`` when it ends; the assertion is on that module set, not on timings (``benchmarks/bench_startup.py``
measures those). The store the listing reads is the bundled ``earlier`` example run, imported once.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any, BinaryIO

import click
import pytest
from click.testing import CliRunner
from rich.console import Console
from rich.table import Table
from rich.text import Text

from p2w_cli.render.terminal import print_table
from p2w_rt.cli import COMMANDS, main
from p2w_runtime.demo.examples import example_run_bundles

HEAVY = (
    "torch",
    "sentence_transformers",
    "faiss",
    "playwright",
    "matplotlib",
    "scipy",
    "pyarrow",
    "asyncpg",
    "starlette",
    "uvicorn",
    "jinja2",
    "openai",
)
STORE = ("sqlalchemy", "sqlmodel", "aiosqlite", "p2w_rt.schemas")
"""What the SQLite store is made of; ``--help`` needs none of it."""
LISTING_NEEDS = ("aiosqlite", "p2w_rt.schemas", "p2w_cli.runs", "p2w_runtime.domain", "p2w_runtime.store.sqlite")
LISTING_NEEDS_NONE = (
    "structlog", "platformdirs", "msgspec", "p2w_runtime.data", "p2w_rt.replay", "p2w_cli.view", "rich.table",
    "sqlalchemy", "sqlmodel", "p2w_runtime.store._tables",
)  # fmt: skip
"""Loaded by other commands, not by ``runs`` and ``show RUN``: the log's structlog is imported when something logs,
the dataset readers when a run's files are attached or carried, rich's table layout only for a table too wide for
the terminal (``print_table`` draws the rest), SQLAlchemy, SQLModel and the tables when a statement not compiled
ahead is first run or a store is set up (``sqlite_statements.json``; docs/design/startup.md)."""
OTHER_COMMANDS = ("p2w_cli.integrity", "p2w_cli.record", "p2w_cli.history", "p2w_cli.replay", "p2w_cli.demo")

_REPORT = """
import json, sys
from p2w_rt import cli
try:
    cli.main(sys.argv[2:])
except SystemExit as exit:
    code = exit.code
else:
    code = 0
modules = sorted(sys.modules)
blas = None
if "numpy" in sys.modules:
    from threadpoolctl import threadpool_info
    blas = [pool["num_threads"] for pool in threadpool_info() if pool["internal_api"] == "openblas"]
with open(sys.argv[1], "w") as out:
    json.dump({"code": code, "modules": modules, "blas_threads": blas}, out)
"""


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("startup")
    path = folder / "runs.db"
    bundle = next(b for b in example_run_bundles() if b.stem == "earlier")
    result = CliRunner().invoke(main, ["--db", str(path), "--log-file", str(folder / "log"), "import", str(bundle)])
    assert result.exit_code == 0, result.output
    return path


def _loaded(tmp_path: Path, *args: str) -> tuple[set[str], str]:
    """(modules in ``sys.modules`` when the command ended, each with the packages above it; its stdout); the command
    must succeed."""
    seen, stdout = _reported(tmp_path, *args)
    modules = set(seen["modules"])
    return modules | {name.split(".")[0] for name in modules}, stdout


def _reported(tmp_path: Path, *args: str) -> tuple[dict[str, Any], str]:
    """What ``_REPORT`` wrote of the command (its modules, the threads of numpy's OpenBLAS if numpy loaded) and its
    stdout; the command must succeed."""
    report = tmp_path / "modules.json"
    env = {**os.environ, "P2W_LOG_FILE": str(tmp_path / "p2w.log")}
    done = subprocess.run(
        [sys.executable, "-c", _REPORT, str(report), *args], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    seen: dict[str, Any] = json.loads(report.read_text())
    assert seen["code"] in (0, None), done.stderr
    return seen, done.stdout


def test_help_loads_neither_the_store_nor_any_heavy_library(tmp_path: Path) -> None:
    modules, out = _loaded(tmp_path, "--help")
    assert "Record, judge, classify and diff" in out and "show" in out
    assert not modules & {*HEAVY, *STORE}, sorted(modules & {*HEAVY, *STORE})


def test_runs_reads_sqlite_without_the_heavy_libraries(tmp_path: Path, db: Path) -> None:
    modules, out = _loaded(tmp_path, "--db", str(db), "runs")
    assert "earlier" in out and "completed" in out
    assert set(LISTING_NEEDS) <= modules  # the check sees what a command does load
    unwanted = {*HEAVY, *LISTING_NEEDS_NONE, *OTHER_COMMANDS, "rich._emoji_codes"}  # no markup printed: no emoji
    assert not modules & unwanted, sorted(modules & unwanted)


def test_show_lists_a_run_without_the_heavy_libraries(tmp_path: Path, db: Path) -> None:
    modules, out = _loaded(tmp_path, "--db", str(db), "show", "earlier")
    assert "Lena_Fischer_A1" in out and "answered" in out
    assert set(LISTING_NEEDS) <= modules
    unwanted = {*HEAVY, *LISTING_NEEDS_NONE, *OTHER_COMMANDS}
    assert not modules & unwanted, sorted(modules & unwanted)


DAILY = (
    ("replay", "earlier", "--judge", "rubric-rules"),
    ("classify", "earlier"),
    ("metrics", "earlier"),
    ("diff", "earlier", "later"),
    ("verify",),
)
"""The commands a researcher runs over recorded runs every day, in an order where each finds what it reads: the first
two judge and classify (appending), the rest read."""
QUIET = ("structlog", "p2w_runtime.llm._client", "rich.traceback", "rich.pretty", "pygments")
"""What none of them logs with or calls a model through: structlog (rich's tracebacks and pretty-printer, pygments
under it) loads with the first record of a structlog logger, the LLM client with the first call. A pass's own
records go through the standard library (``p2w_runtime.logs.get_logger``), written to the file without structlog."""
OTHER_JUDGES = ("p2w_rt.replay.webarena._judge", "p2w_rt.replay.agenticshop._judges", "p2w_rt.replay.persona2web._llm")
LEFT_OUT = {
    "replay": ("p2w_rt.replay.classify", "p2w_cli.render.classify", "p2w_cli.render.classify_pass", *OTHER_JUDGES),
    "classify": (
        "p2w_rt.replay.judges._command", "p2w_cli.render.judging", "p2w_cli.render.judge_pass",
        "p2w_rt.replay.classify._llm",
    ),
    "diff": OTHER_JUDGES,
}  # fmt: skip
"""What a command runs without: a pass, the other family's library and watch; a pass and ``diff``, the judges and
classifiers they do not run (a plugin's producers are imported when one of them is asked for,
``replay.derived.Deferred``)."""
CACHED_LEFT_OUT = (
    "p2w_rt.replay.classify._hallucination", "p2w_rt.replay.classify._history_use", "p2w_rt.replay.classify._redundant",
    "p2w_rt.replay.matching._values", "p2w_rt.replay.matching._numbers", "p2w_rt.replay.matching._tokens",
)  # fmt: skip
"""What ``classify`` runs without when every episode is cached: the rules classifier's rules and the value and number
patterns of ``replay.matching`` load with the first episode labelled (the site lists need only its ``_sites``)."""

METRICS_NEEDS_NONE = (
    "p2w_rt.replay.judges._base", "p2w_rt.replay.persona2web._rules", "p2w_rt.replay.matching",
    "p2w_rt.replay.webarena", "p2w_rt.replay.agenticshop._judges", "p2w_rt.replay.agenticshop._plugin",
    "p2w_rt.replay.persona2web._plugin", "p2w_rt.replay.derived._registry", "p2w_rt.replay.derived._pass",
    "p2w_rt.replay.judges._records",
)  # fmt: skip
"""What ``metrics`` reads recorded judgments without: the judges' code, the matching rules, the judge plugins and the
registry of producers load only when a judge runs (the packages name them lazily, ``p2w_runtime/lazy.py``). It reads
the plugin list (``replay/plugins.py``, names only) for its ``metrics`` entries, the plugins' tables, and reads each
judgment as its scores (``replay.judges.read_scores``), not as the whole ``Judgment`` with its evidence."""


def test_the_daily_commands_load_no_heavy_library_and_no_sqlalchemy(tmp_path: Path) -> None:
    """Judging with rules, classifying, metrics, diff and verify call no model and run only statements compiled
    ahead: none loads openai, torch, scipy or the rest, nor SQLAlchemy, nor structlog though a pass logs, nor the
    other family's pass (issue 37; ``bench_startup.py`` times them)."""
    path = tmp_path / "daily.db"
    for bundle in example_run_bundles():
        args = ["--db", str(path), "--log-file", str(tmp_path / "log"), "import", str(bundle)]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
    unwanted = {*HEAVY, "sqlalchemy", "sqlmodel", "p2w_runtime.store._tables", *QUIET}
    seen: set[tuple[str, ...]] = set()
    for command in (*DAILY, *DAILY[:2]):  # replay and classify twice: the second pass finds every episode cached
        modules, out = _loaded(tmp_path, "--db", str(path), *command)
        assert out.strip(), command
        assert not modules & unwanted, (command, sorted(modules & unwanted))
        left_out = set(LEFT_OUT.get(command[0], ()))
        if command[0] == "classify" and command in seen:
            left_out |= set(CACHED_LEFT_OUT)
        elif command[0] == "classify":  # the first pass labels every episode: the check sees what labelling loads
            assert set(CACHED_LEFT_OUT) <= modules, sorted(set(CACHED_LEFT_OUT) - modules)
        seen.add(command)
        assert not modules & left_out, (command, sorted(modules & left_out))
        if command[0] == "metrics":
            assert not modules & set(METRICS_NEEDS_NONE), sorted(modules & set(METRICS_NEEDS_NONE))


def test_diff_of_judged_runs_loads_no_judge_and_runs_numpy_on_one_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``diff`` of two runs judged whole reads their judgments, so the judge's code is not loaded; its bootstrap
    resamples small arrays, so numpy's OpenBLAS starts one thread instead of one per core (their spinning was a fifth
    of ``diff``'s CPU), unless the user set a count."""
    path = tmp_path / "judged.db"
    for bundle in example_run_bundles():
        args = ["--db", str(path), "--log-file", str(tmp_path / "log"), "import", str(bundle)]
        assert CliRunner().invoke(main, args).exit_code == 0
    for label in ("earlier", "later"):
        args = ["--db", str(path), "--log-file", str(tmp_path / "log"), "replay", label, "--judge", "rubric-rules"]
        assert CliRunner().invoke(main, args).exit_code == 0
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    seen, out = _reported(tmp_path, "--db", str(path), "diff", "earlier", "later")
    assert "earlier" in out and "later" in out
    assert "p2w_rt.replay.persona2web._rules" not in seen["modules"]
    assert seen["blas_threads"] == [1]
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    seen, _ = _reported(tmp_path, "--db", str(path), "diff", "earlier", "later")
    assert seen["blas_threads"] == [min(2, os.cpu_count() or 1)]


@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "pipe"])
def test_print_table_draws_what_rich_table_draws(terminal: bool) -> None:
    """``runs`` and ``show RUN`` print with ``print_table`` instead of importing ``rich.table``: the same bytes,
    colour escapes included, for wide characters and text that looks like markup or an emoji code; a table wider
    than the console is rich's own."""
    headers = ["run id", "label", "episodes", "recorded at"]
    rows = [
        ["01a2345b", "[red]not markup[/]", "24", "2026-12-02T01:25:19"],
        ["01a2345c", "東京 :smile: café", "3", "-"],
    ]
    for width in (200, 40):
        drawn, expected = (
            Console(
                file=io.StringIO(), force_terminal=terminal, color_system="truecolor" if terminal else None, width=width
            )
            for _ in range(2)
        )
        print_table(drawn, headers, rows)
        table = Table(*headers)
        for row in rows:
            table.add_row(*(Text(c) for c in row))
        expected.print(table)
        assert drawn.file.getvalue() == expected.file.getvalue(), width  # type: ignore[attr-defined]


async def _listed_with(db: Path) -> tuple[list[str], list[str]]:
    from p2w_runtime.domain import list_runs
    from p2w_runtime.store import open_store

    async with open_store(db) as store:
        runs = await list_runs(store)
        compiled = [n for n in ("_insert_events", "_insert_blobs", "_work_sql") if n in vars(store)]
        return [r.label for r in runs], compiled + list(vars(store)["_compiled_here"])


def test_a_store_compiles_a_statement_when_first_used(db: Path) -> None:
    """Opening a store compiles none of its statements, and a SQLite store's listing runs them compiled ahead
    (``sqlite_statements.json``): nothing is compiled, the writers' statements included."""
    labels, compiled = asyncio.run(_listed_with(db))
    assert labels == ["earlier"] and compiled == []


def test_the_listing_builds_only_the_payload_models_it_validates(tmp_path: Path, db: Path) -> None:
    """Payload models are built on first use (``defer_build``): after ``show RUN`` only the four event types of
    the listing have a validator; the union of every payload (``PAYLOAD_ADAPTER``) was never built."""
    report = tmp_path / "built.json"
    probe = (
        _REPORT.replace(
            "from p2w_rt import cli\n",
            "from p2w_rt import cli\nfrom p2w_rt.schemas._payload_decode import PAYLOAD_ADAPTER, PAYLOAD_MODELS\n",
        )
        .replace(
            "modules = sorted(sys.modules)",
            "modules = sorted(n for n, m in PAYLOAD_MODELS.items() if m.__pydantic_complete__)",
        )
        .replace('"blas_threads": blas', '"union": PAYLOAD_ADAPTER.pydantic_complete')
    )
    env = {**os.environ, "P2W_LOG_FILE": str(tmp_path / "p2w.log")}
    done = subprocess.run(
        [sys.executable, "-c", probe, str(report), "--db", str(db), "show", "earlier"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    seen = json.loads(report.read_text())
    assert seen["code"] in (0, None) and "Lena_Fischer_A1" in done.stdout
    assert set(seen["modules"]) <= {"run.started", "run.finished", "episode.started", "episode.finished"}, seen
    assert "episode.finished" in seen["modules"] and seen["union"] is False


def test_subcommand_help_loads_no_store(tmp_path: Path, db: Path) -> None:
    modules, out = _loaded(tmp_path, "--db", str(db), "show", "--help")
    assert "RUN" in out
    assert not modules & {*HEAVY, *STORE, *OTHER_COMMANDS}, sorted(modules & {*HEAVY, *STORE, *OTHER_COMMANDS})


def test_commands_load_on_demand_and_help_lists_every_one() -> None:
    """``cli.COMMANDS`` names each command's module; the group's help imports them all to list them, and an
    unknown command is click's usual error."""
    listed = CliRunner().invoke(main, ["--help"])
    assert listed.exit_code == 0
    for name in COMMANDS:
        assert f"\n  {name} " in listed.output, name
    assert main.get_command(click.Context(main), "no-such") is None
    unknown = CliRunner().invoke(main, ["no-such"])
    assert unknown.exit_code == 2 and "No such command 'no-such'" in unknown.output


def test_structlog_is_set_up_when_first_imported_after_the_log_is(tmp_path: Path) -> None:
    """``configure_logging`` imports no structlog; a standard-library record, then a structlog one logged after
    structlog is first imported, both land in the JSON file, redacted, and on stderr, never on stdout (where an
    unconfigured structlog prints)."""
    log = tmp_path / "p2w.jsonl"
    code = (
        "import logging, sys; from pathlib import Path; from p2w_runtime.logs import configure_logging\n"
        f"configure_logging(log_file=Path({str(log)!r}))\n"
        "assert 'structlog' not in sys.modules\n"
        "logging.getLogger('plain').warning('first Authorization: Bearer abcdefgh12345')\n"
        "import structlog\n"
        "structlog.get_logger('late').warning('second', url='https://user:hunter2secret@example.test/x')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    first, second = (json.loads(line) for line in log.read_text().splitlines())
    assert first["event"] == "first Authorization: ***" and first["level"] == "warning"
    assert second["event"] == "second" and second["logger"] == "late" and second["url"] == "https://***@example.test/x"
    assert "hunter2secret" not in done.stderr and "second" in done.stderr and "first" in done.stderr


def test_a_pass_logger_writes_what_structlog_writes_without_importing_it(tmp_path: Path) -> None:
    """``get_logger``'s records, made through the standard library, are the lines a structlog logger writes for the
    same call, key order and redaction included, in the file and on the console; structlog is imported only for
    the console's first record."""
    log = tmp_path / "p2w.jsonl"
    code = (
        "import sys; from pathlib import Path; from p2w_runtime.logs import configure_logging, get_logger\n"
        f"configure_logging(log_file=Path({str(log)!r}))\n"
        "fields = dict(run_id='r1', producers=['rules'], url='https://user:hunter2secret@example.test/x', n=3)\n"
        "get_logger('pass').info('judge.pass.start', **fields)\n"
        "get_logger('pass').debug('not written', **fields)\n"
        "assert 'structlog' not in sys.modules\n"
        "get_logger('pass').warning('waiting', **fields)\n"
        "import structlog\n"
        "structlog.get_logger('pass').info('judge.pass.start', **fields)\n"
        "structlog.get_logger('pass').warning('waiting', **fields)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    ours_info, ours_warning, theirs_info, theirs_warning = (json.loads(line) for line in log.read_text().splitlines())
    for ours, theirs in ((ours_info, theirs_info), (ours_warning, theirs_warning)):
        assert ours.pop("timestamp").endswith("Z") and theirs.pop("timestamp").endswith("Z")
        assert list(ours.items()) == list(theirs.items()), (ours, theirs)
    assert ours_info["url"] == "https://***@example.test/x" and ours_info["logger"] == "pass"
    console = [line.split(" ", 1)[1] for line in done.stderr.splitlines()]  # without the timestamp
    assert len(console) == 2 and console[0] == console[1] and "hunter2secret" not in console[0], console
    assert "n=3" in console[0] and "run_id=r1" in console[0], console


def test_a_command_loading_a_model_says_so_on_a_terminal(tmp_path: Path) -> None:
    """The real load path (sentence-transformers reading a folder) on a folder that holds no model, stderr a
    terminal: the notice comes first, then the one-line error naming the embedder. On a pipe, only the error."""
    not_a_model = tmp_path / "not-a-model"
    not_a_model.mkdir()
    env = {**os.environ, "P2W_LOG_FILE": str(tmp_path / "p2w.log"), "COLUMNS": "500"}
    command = [
        *(sys.executable, "-c", "import sys, cli; cli.main(sys.argv[1:])", "history", "search", "Jordan_Park", "q"),
        *("--embedder", str(not_a_model), "--cache-dir", str(tmp_path / "cache")),
    ]
    leader, follower = pty.openpty()
    with os.fdopen(leader, "rb", buffering=0) as terminal:
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=follower, env=env, timeout=300)
        os.close(follower)
        said = _read_all(terminal).decode().replace("\r\n", "\n").splitlines()
    assert done.returncode != 0
    assert said[0] == f"loading {not_a_model} …", said
    assert said[-1].startswith("error: embedder") and "cannot load the model" in said[-1], said

    piped = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert piped.returncode != 0
    assert piped.stderr.splitlines() == [said[-1]]


def _read_all(terminal: BinaryIO) -> bytes:
    """What the child wrote to the terminal; reading past its end raises EIO on Linux."""
    out = b""
    while True:
        try:
            chunk = terminal.read(65536)
        except OSError:
            return out
        if not chunk:
            return out
        out += chunk
