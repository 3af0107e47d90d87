"""What ``--db`` names: a file whatever characters its path holds, a PostgreSQL URL, or neither, said in one line that
never shows a password; and a file a first write left without tables is said to be that, not someone else's."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.store import StoreError, connect_store, open_store
from tests.helpers.builders import build_run
from tests.helpers.raw_sqlite import raw_sqlite


@pytest.mark.parametrize("folder", ["runs?v2", "100%41 done"])
def test_a_new_store_is_made_at_its_path_and_nowhere_else_whatever_characters_the_path_holds(
    tmp_path: Path, folder: str
) -> None:
    """Parsed as URL text, "?" started a query (the store was set up in a file named ``runs``) and "%41" was
    unescaped (``100A done``, which does not exist)."""
    db = tmp_path / folder / "p2w.db"
    db.parent.mkdir()

    async def fill() -> None:
        async with open_store(db) as store:
            await build_run(store, "odd-path")

    asyncio.run(fill())
    result = CliRunner().invoke(main, ["--db", str(db), "verify", "--full", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["ok"]
    assert [path.name for path in tmp_path.iterdir()] == [folder]
    assert {path.name for path in db.parent.iterdir()} <= {"p2w.db", "p2w.db-wal", "p2w.db-shm"}


@pytest.mark.parametrize(
    "url", ["postgresq://bob:Hunter2pw@db.example/runs", "mysql://bob:Hunter2pw@db.example:3306/runs"]
)
@pytest.mark.parametrize("command", [["runs"], ["import", "run.p2w"], ["migrate", "--from", "a.db", "--to"]])
def test_a_url_of_another_scheme_is_refused_in_one_line_without_its_password(
    tmp_path: Path, url: str, command: list[str]
) -> None:
    """Taken for a file path, its "//" folded into "/", no message could hide the password: it was shown twice
    ("folder postgresq:/bob:Hunter2pw@db.example does not exist")."""
    args = [*command, url] if command[0] == "migrate" else ["--db", url, *command]
    result = CliRunner().invoke(main, args, env={"P2W_DB": None})
    assert result.exit_code == 2
    assert "Hunter2pw" not in result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "bob:***@db.example" in errors[0], result.stderr
    assert "neither a postgresql:// URL nor a SQLite file" in errors[0]
    assert list(tmp_path.iterdir()) == []


async def test_a_store_of_another_scheme_is_a_store_error_without_its_password() -> None:
    with pytest.raises(StoreError) as refused:
        await connect_store("mysql://bob:Hunter2pw@db.example/runs")
    assert str(refused.value) == "mysql://bob:***@db.example/runs: neither a postgresql:// URL nor a SQLite file"


def test_a_file_a_first_write_left_without_tables_is_named_so_and_the_next_write_sets_it_up(tmp_path: Path) -> None:
    """A first write switches the new file to WAL before it creates the tables (importing SQLAlchemy in between); a
    process killed there leaves this file, which reading commands called "not a p2w-rt event store"."""
    db = tmp_path / "p2w.db"
    with raw_sqlite(db) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
    result = CliRunner().invoke(main, ["--db", str(db), "verify", "--full"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"error: {db}: a SQLite database with no tables yet: nothing recorded in it"]

    async def fill() -> None:
        async with open_store(db) as store:
            await build_run(store, "after-the-kill")

    asyncio.run(fill())
    result = CliRunner().invoke(main, ["--db", str(db), "verify", "--full", "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["ok"], result.output


@pytest.mark.parametrize("option", ["--db", "--with"])
def test_the_viewers_own_store_options_refuse_another_scheme_without_its_password(tmp_path: Path, option: str) -> None:
    """``view --db`` and ``--with`` took any text for a file path and printed a misspelt URL's password whole."""
    demo = tmp_path / "p2w.db"
    url = "postgresq://bob:Hunter2pw@db.example/runs"
    result = CliRunner().invoke(main, ["--db", str(demo), "view", option, url], env={"P2W_DB": None})
    assert result.exit_code == 2 and "Hunter2pw" not in result.output
    assert f"Invalid value for '{option}': postgresq://bob:***@db.example/runs: neither" in result.stderr
    missing = CliRunner().invoke(main, ["--db", str(demo), "view", "--with", str(tmp_path / "nope.db")])
    assert missing.exit_code == 2 and f"{tmp_path / 'nope.db'}: no such database file" in missing.stderr
