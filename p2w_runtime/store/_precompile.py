"""Writes ``sqlite_statements.json``: the ``FIXED`` statements compiled for SQLite, and the tables a set-up store holds.

Both come from the one declaration of the tables (``_tables.py``) and the statements' Core (``_sql_base.FIXED``);
the SQLite store runs them without importing SQLAlchemy (docs/design/startup.md, fourth round). Run
``python -m p2w_runtime.store._precompile`` after changing a table or a ``FIXED`` statement:
``tests/store/test_sqlite_statements.py`` fails until the file is written again.
"""

from __future__ import annotations

import json
from importlib import import_module

from p2w_runtime.store._sql_base import FIXED, SKIPPING_DUPLICATES, Compiled, or_skip_name
from p2w_runtime.store._sqlite_statements import SOURCE


def compiled_for_sqlite() -> tuple[frozenset[str], dict[str, Compiled]]:
    """(the tables' names, every ``FIXED`` statement compiled for SQLite's aiosqlite dialect), from SQLAlchemy."""
    from sqlalchemy.ext.asyncio import create_async_engine

    from p2w_runtime.store._core import EVENTS  # every table declared

    import_module("p2w_runtime.store._sql")  # every FIXED statement registered
    store = import_module("p2w_runtime.store.sqlite").SqliteEventStore
    dialect = create_async_engine("sqlite+aiosqlite://").dialect
    tables = EVENTS.metadata.tables
    statements = {name: build() for name, build in FIXED.items()}
    statements |= {or_skip_name(t): store._insert_ignoring_duplicates(tables[t]) for t in SKIPPING_DUPLICATES}
    return frozenset(tables), {name: Compiled.of(statements[name], dialect) for name in sorted(statements)}


def source() -> str:
    """The text of ``sqlite_statements.json``: one statement a line, keys sorted, so a change reads as a diff."""
    tables, statements = compiled_for_sqlite()
    entries = ",\n".join(
        f"    {json.dumps(name)}: {json.dumps(_entry(s), sort_keys=True)}" for name, s in statements.items()
    )
    return f'{{\n  "statements": {{\n{entries}\n  }},\n  "tables": {json.dumps(sorted(tables))}\n}}\n'


def _entry(statement: Compiled) -> dict[str, object]:
    """What the file keeps of a statement; defaults that are None are left out (``Compiled.params`` gives None)."""
    defaults = {name: value for name, value in statement.defaults.items() if value is not None}
    return {"sql": statement.sql, "names": statement.names, "defaults": defaults}


if __name__ == "__main__":
    SOURCE.write_text(source())
