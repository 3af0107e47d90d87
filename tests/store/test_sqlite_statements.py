"""The SQLite store without SQLAlchemy: the statements it runs compiled ahead (``sqlite_statements.json``) are what
SQLAlchemy compiles from the tables today, a store that is set up opens and is listed (its summaries brought up
to date and written) without importing it, and one with a table or trigger missing is set up through it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from p2w_rt.cli import main
from p2w_runtime.demo.examples import example_run_bundles
from p2w_runtime.domain import list_runs
from p2w_runtime.store import _precompile, connect_store
from p2w_runtime.store._core import EVENTS
from p2w_runtime.store._sql_base import FIXED, SKIPPING_DUPLICATES, Compiled, or_skip_name
from p2w_runtime.store._sqlite_statements import SOURCE, STATEMENTS, TABLES
from p2w_runtime.store.sqlite import SqliteEventStore
from tests.helpers.raw_sqlite import raw_sqlite


def _as_shipped(compiled: Compiled) -> tuple[str, tuple[str, ...], dict[str, object]]:
    """What the file keeps of a statement: its SQL, its parameters' order and the defaults that are not None."""
    return compiled.sql, compiled.names, {name: v for name, v in compiled.defaults.items() if v is not None}


async def _compiled_by(path: Path) -> dict[str, tuple[str, tuple[str, ...], dict[str, object]]]:
    store = await connect_store(path)
    try:
        assert isinstance(store, SqliteEventStore)
        dialect = store.engine.dialect
        statements = {name: build() for name, build in FIXED.items()}
        tables = EVENTS.metadata.tables
        statements |= {or_skip_name(t): store._insert_ignoring_duplicates(tables[t]) for t in SKIPPING_DUPLICATES}
        return {name: _as_shipped(Compiled.of(statement, dialect)) for name, statement in statements.items()}
    finally:
        await store.close()


def test_the_statements_compiled_ahead_are_what_sqlalchemy_compiles_now(tmp_path: Path) -> None:
    """Fails after a table or a ``FIXED`` statement changed until ``python -m p2w_runtime.store._precompile`` is
    run: the file must say what it is generated from."""
    shipped = {name: _as_shipped(compiled) for name, compiled in STATEMENTS.items()}
    assert asyncio.run(_compiled_by(tmp_path / "new.db")) == shipped
    assert set(EVENTS.metadata.tables) == TABLES
    assert SOURCE.read_text() == _precompile.source()


_LIST = """
import asyncio, json, sys
from p2w_runtime.domain import episodes_of, list_runs
from p2w_runtime.store import open_store

async def listed():
    async with open_store(sys.argv[1]) as store:
        runs = await list_runs(store)
        episodes = await episodes_of(store, runs[-1].run_id)
        return [r.label for r in runs], len(episodes), await store.summary_mark("runs.v1"), await store.log_end()

labels, episodes, mark, end = asyncio.run(listed())
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("sqlalchemy", "sqlmodel"))
print(json.dumps({"labels": labels, "episodes": episodes, "current": mark == end, "loaded": loaded}))
"""


def _listed_in_a_fresh_process(db: Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-c", _LIST, str(db)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    listed: dict[str, object] = json.loads(done.stdout)
    return listed


def _import(db: Path, tmp_path: Path, run: str) -> None:
    bundle = next(b for b in example_run_bundles() if b.stem == run)
    done = CliRunner().invoke(main, ["--db", str(db), "--log-file", str(tmp_path / "log"), "import", str(bundle)])
    assert done.exit_code == 0, done.output


def test_a_listing_brings_the_summaries_up_to_date_without_sqlalchemy(tmp_path: Path) -> None:
    """The first listing after an import folds the new events and writes the rows, with statements compiled ahead:
    on a store whose rows were never written (a whole fold), and after another run was appended (a fold from the
    mark)."""
    db = tmp_path / "runs.db"
    _import(db, tmp_path, "earlier")
    first = _listed_in_a_fresh_process(db)
    assert first == {"labels": ["earlier"], "episodes": 24, "current": True, "loaded": []}
    _import(db, tmp_path, "later")
    second = _listed_in_a_fresh_process(db)
    assert second["labels"] == ["earlier", "later"] and second["current"] is True and second["loaded"] == []


async def _listed(db: Path) -> list[str]:
    store = await connect_store(db)
    try:
        return [run.label for run in await list_runs(store)]
    finally:
        await store.close()


def test_a_store_with_a_trigger_or_a_table_missing_is_set_up_again_when_opened(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    _import(db, tmp_path, "earlier")
    with raw_sqlite(db) as raw:
        raw.execute("DROP TRIGGER events_delete_held")
        raw.execute("DROP TABLE work_items")
    assert asyncio.run(_listed(db)) == ["earlier"]
    with raw_sqlite(db) as raw:
        names = {name for (name,) in raw.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger')")}
    assert {"events_delete_held", "work_items"} <= names


_FILTERED = """
import asyncio, json, sys
from p2w_runtime.store import open_store

async def read(types):
    async with open_store(sys.argv[1], create=False, read_only=True) as store:
        run = (await store.list_streams())[0].stream.split("/")[0]
        found = [(e.position, e.stream, e.type) async for e in store.read_all(stream_prefix=run + "/", types=types)]
        return run, found, [(e.position, e.stream, e.type) async for e in store.read_all()]

types = json.loads(sys.argv[2])
run, found, every = asyncio.run(read(types))
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("sqlalchemy", "sqlmodel"))
print(json.dumps({"run": run, "found": found, "every": every, "loaded": loaded}))
"""


def _read_in_a_fresh_process(db: Path, types: list[str] | None) -> dict:
    command = [sys.executable, "-c", _FILTERED, str(db), json.dumps(types)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    found: dict = json.loads(done.stdout)
    return found


def test_a_read_filtered_by_stream_and_type_runs_a_statement_compiled_ahead(tmp_path: Path) -> None:
    """What a viewer catching up with a run's usage reads (a prefix and a few types), and a prefix alone, come from
    statements compiled ahead: the events of the plain read that match, without importing SQLAlchemy. More types
    than the statement's slots compile their own statement, with the same result."""
    db = tmp_path / "runs.db"
    _import(db, tmp_path, "earlier")
    many = [f"no.such.type.{i}" for i in range(9)] + ["llm.call"]
    for types, loads in (
        (["llm.call", "episode.finished"], False),
        (["episode.started"], False),
        (None, False),
        (many, True),
    ):
        read = _read_in_a_fresh_process(db, types)
        wanted = [e for e in read["every"] if e[1].startswith(read["run"] + "/") and (types is None or e[2] in types)]
        assert read["found"] == wanted and wanted, types
        assert bool(read["loaded"]) is loads, (types, read["loaded"])
