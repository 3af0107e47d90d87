"""A command, or a script through ``open_store``, that appended to a run brings the run's first page up to date
(``p2w_cli/view/_refresh.py``): once a viewer has stored a page in the store, the next fresh viewer serves the row of
every finished run the writer wrote to, which shows what the page built from the whole run shows; runs the writer did
not touch, and stores where no viewer stored a page, are left alone."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from importlib.metadata import entry_points
from pathlib import Path

import pydantic_core
import pytest
from click.testing import CliRunner

from p2w_cli.view._first_page import MODEL
from p2w_cli.view._kept_rows import FIRST_PAGE, write_row
from p2w_cli.view.pages import refresh_first_pages
from p2w_rt.cli import main
from p2w_rt.replay.judges import JudgeOptions, judge_runs
from p2w_runtime.store import Summary, open_store
from p2w_runtime.store._read_models import ENTRY_POINT_GROUP as READ_MODELS
from tests.helpers.p2w_process import p2w_rt
from tests.helpers.raw_sqlite import raw_sqlite
from tests.helpers.terminal_support import run_on_terminal
from tests.helpers.view_app import fresh_open, fresh_runs
from tests.helpers.view_support import drop_rows, log_end

pytestmark = pytest.mark.slow

REJUDGE = ["replay", "earlier", "--judge", "rubric-rules", "--force"]
"""Appends a judgment per episode of ``earlier`` (new event ids, so the page's rows change) and nothing else."""


@pytest.fixture
def db(demo_copy: Path) -> Path:
    return demo_copy


def stored_rows(db: Path) -> dict[str, int]:
    with raw_sqlite(db) as conn:
        return dict(conn.execute("SELECT key, ordinal FROM summaries WHERE kind = ?", (MODEL,)).fetchall())


def test_a_judging_pass_leaves_the_runs_stored_first_page_current_and_equal_to_a_whole_build(db: Path) -> None:
    before, _ = fresh_open(db, "earlier")
    run_id = before.info.run_id

    result = CliRunner().invoke(main, ["--db", str(db), *REJUDGE], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr

    assert stored_rows(db)[run_id] == log_end(db), "the command stored the page at the log's end"
    kept, queries = fresh_open(db, "earlier")
    assert queries.stored_pages == 1 and not queries.reads.entries, "served from the row: the run was not read"
    assert pydantic_core.to_json(kept) != pydantic_core.to_json(before), "the row shows the new judgments"
    drop_rows(db, MODEL)
    whole, queries = fresh_open(db, "earlier")
    assert queries.stored_pages == 0
    assert pydantic_core.to_json(kept) == pydantic_core.to_json(whole)


def test_a_judging_pass_through_the_library_leaves_the_first_page_current_as_its_store_closes(db: Path) -> None:
    """A script, not a command: ``judge_runs`` in a store opened by ``open_store`` (docs/design/view.md)."""
    before, _ = fresh_open(db, "earlier")

    async def judge() -> None:
        async with open_store(db, create=False) as store:
            await judge_runs(store, ["earlier"], JudgeOptions(judges=("rubric-rules",), force=True))

    asyncio.run(judge())
    assert stored_rows(db)[before.info.run_id] == log_end(db), "the store's close stored the page at the log's end"
    kept, queries = fresh_open(db, "earlier")
    assert queries.stored_pages == 1 and not queries.reads.entries, "served from the row: the run was not read"
    assert pydantic_core.to_json(kept) != pydantic_core.to_json(before), "the row shows the new judgments"
    drop_rows(db, MODEL)
    whole, _ = fresh_open(db, "earlier")
    assert pydantic_core.to_json(kept) == pydantic_core.to_json(whole)


def test_the_first_pages_are_installed_as_the_read_model_their_mark_names() -> None:
    """The entry point's name is the mark ``bring_forward`` looks up: a new ``FIRST_PAGE`` needs a new entry."""
    installed = {entry.name: entry.load() for entry in entry_points(group=READ_MODELS)}
    assert installed.get(FIRST_PAGE) is refresh_first_pages, installed


def test_only_the_runs_a_command_appended_to_are_rebuilt(db: Path) -> None:
    rows, _ = fresh_runs(db)
    assert len(rows) > 1
    ids = {row.info.run_id: row.info.label for row in rows}
    earlier = next(run for run, label in ids.items() if label == "earlier")
    since = log_end(db)
    stored = stored_rows(db)

    result = CliRunner().invoke(main, ["--db", str(db), *REJUDGE], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr

    after = stored_rows(db)
    assert after[earlier] == log_end(db) > since
    assert {run: after[run] for run in ids if run != earlier} == {run: stored[run] for run in ids if run != earlier}

    async def again() -> list[str]:
        async with open_store(db) as store:
            return await refresh_first_pages(store, since, await store.log_end())

    assert asyncio.run(again()) == [earlier], "asked again, it names the run it appended to"


def test_a_run_imported_into_a_store_a_viewer_opened_has_its_first_page_stored(db: Path) -> None:
    fresh_runs(db)
    args = ["--db", str(db), "import-trajectories", "--examples", "--format", "p2w-agentoccam", "--label", "occam"]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    kept, queries = fresh_open(db, "occam")
    assert queries.stored_pages == 1 and stored_rows(db)[kept.info.run_id] == log_end(db)
    drop_rows(db, MODEL)
    whole, queries = fresh_open(db, "occam")
    assert queries.stored_pages == 0 and pydantic_core.to_json(kept) == pydantic_core.to_json(whole)


def test_two_processes_refreshing_at_once_leave_one_current_row(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from p2w_cli.view import _refresh

    before, _ = fresh_open(db, "earlier")
    since = log_end(db)
    monkeypatch.setattr(_refresh, "REFRESH_LIMIT", 0)  # the command leaves the row stale
    result = CliRunner().invoke(main, ["--db", str(db), *REJUDGE], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    monkeypatch.undo()
    assert stored_rows(db) == {before.info.run_id: since}

    async def both() -> list[list[str]]:
        async with open_store(db) as one, open_store(db) as two:
            end = await one.log_end()
            return list(
                await asyncio.gather(refresh_first_pages(one, since, end), refresh_first_pages(two, since, end))
            )

    assert asyncio.run(both()) == [[before.info.run_id]] * 2
    assert stored_rows(db) == {before.info.run_id: log_end(db)}
    kept, queries = fresh_open(db, "earlier")
    assert queries.stored_pages == 1
    drop_rows(db, MODEL)
    whole, _ = fresh_open(db, "earlier")
    assert pydantic_core.to_json(kept) == pydantic_core.to_json(whole)


def test_a_page_built_at_an_earlier_end_does_not_replace_one_stored_at_a_later_end(db: Path) -> None:
    """The slower of two commands refreshing one page writes last, its page built before the other's appends."""
    built, _ = fresh_open(db, "earlier")
    run_id, later = built.info.run_id, stored_rows(db)[built.info.run_id]

    async def write_stale() -> None:
        async with open_store(db) as store:
            await write_row(store, MODEL, Summary(MODEL, run_id, run_id, later - 1, "{}"), later - 1)

    asyncio.run(write_stale())
    assert stored_rows(db) == {run_id: later}
    kept, queries = fresh_open(db, "earlier")
    assert queries.stored_pages == 1 and pydantic_core.to_json(kept) == pydantic_core.to_json(built)


def test_more_appended_than_the_limit_is_left_to_the_viewer(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from p2w_cli.view import _refresh

    before, _ = fresh_open(db, "earlier")
    since = log_end(db)
    monkeypatch.setattr(_refresh, "REFRESH_LIMIT", 10)
    result = CliRunner().invoke(main, ["--db", str(db), *REJUDGE], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert log_end(db) - since > 10
    assert stored_rows(db)[before.info.run_id] == since, "left stale: the next open rebuilds it"
    _, queries = fresh_open(db, "earlier")
    assert queries.stored_pages == 0


_MODULES_AFTER = """
import json, sys
from p2w_rt import cli
try:
    cli.main(sys.argv[2:])
except SystemExit:
    pass
with open(sys.argv[1], "w") as out:
    json.dump(sorted(sys.modules), out)
"""


def modules_after(db: Path, tmp_path: Path, args: list[str] = REJUDGE) -> set[str]:
    report = tmp_path / "modules.json"
    command = [sys.executable, "-c", _MODULES_AFTER, str(report), "--db", str(db), *args]
    subprocess.run(command, check=True, capture_output=True, timeout=300)
    return set(json.loads(report.read_text()))


def test_the_page_model_loads_only_where_a_page_is_stored_and_without_sqlalchemy_or_numpy(
    db: Path, tmp_path: Path
) -> None:
    assert "p2w_cli.view._run_pages" not in modules_after(db, tmp_path)
    assert stored_rows(db) == {}
    fresh_open(db, "earlier")
    modules = modules_after(db, tmp_path)
    assert "p2w_cli.view._run_pages" in modules, "with a stored page the command rebuilds it"
    assert "sqlalchemy" not in modules, "the rebuild's reads and writes run statements compiled ahead"
    assert "numpy" not in modules, "the run page names a constant of replay.agreement, not its statistics"


def test_a_command_that_appended_to_no_kept_run_costs_no_import_of_the_page_model(db: Path, tmp_path: Path) -> None:
    """``verify`` appends its mark (no run's event) to a store whose run pages a viewer stored."""
    fresh_runs(db)
    stored, end = stored_rows(db), log_end(db)
    assert "p2w_cli.view._run_pages" not in modules_after(db, tmp_path, ["verify"])
    assert log_end(db) > end and stored_rows(db) == stored


def test_a_command_killed_at_any_moment_leaves_a_page_equal_to_a_whole_build(db: Path) -> None:
    """kill -9 during the pass or during its page's refresh: the row is written in one transaction, so it is the old
    row (stale: the open rebuilds it) or the new one (current), and the store verifies whole either way."""
    fresh_open(db, "earlier")
    command = [str(Path(sys.executable).with_name("p2w-rt")), "--db", str(db), *REJUDGE]
    started = time.monotonic()
    subprocess.run(command, check=True, capture_output=True, timeout=300)
    whole_command = time.monotonic() - started
    for fraction in (0.5, 0.7, 0.85, 0.95):
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(whole_command * fraction)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        page, _ = fresh_open(db, "earlier")
        drop_rows(db, MODEL)
        whole, _ = fresh_open(db, "earlier")
        assert pydantic_core.to_json(page) == pydantic_core.to_json(whole), f"killed at {fraction:.0%}"
    verified = p2w_rt(db, "verify", "--full")
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_a_refresh_says_so_on_a_terminal_and_not_on_a_pipe(db: Path, tmp_path: Path) -> None:
    """The page's build is a silence after the command's own work (about a second at 10,000 episodes)."""
    fresh_open(db, "earlier")
    command = [str(Path(sys.executable).with_name("p2w-rt")), "--db", str(db), *REJUDGE]
    env = {**os.environ, "P2W_LOG_FILE": str(tmp_path / "p2w.log")}
    code, shown, _ = run_on_terminal(command, env)
    assert code == 0
    assert "updating the viewer's first page of earlier …" in shown.decode(), shown[-500:]
    piped = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert piped.returncode == 0 and "updating" not in piped.stderr, piped.stderr
    assert stored_rows(db)[fresh_open(db, "earlier")[0].info.run_id] == log_end(db)
