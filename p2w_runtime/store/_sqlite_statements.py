"""The ``FIXED`` statements compiled for SQLite, and the tables a set-up store holds: what opening and listing a
SQLite store need, without SQLAlchemy. They are data (``sqlite_statements.json``), written by
``python -m p2w_runtime.store._precompile`` and read here once per process."""

from __future__ import annotations

import json
from pathlib import Path

from p2w_runtime.store._sql_base import Compiled

SOURCE = Path(__file__).with_name("sqlite_statements.json")


def _read() -> tuple[frozenset[str], dict[str, Compiled]]:
    shipped = json.loads(SOURCE.read_bytes())
    statements = {
        name: Compiled(entry["sql"], tuple(entry["names"]), entry["defaults"])
        for name, entry in shipped["statements"].items()
    }
    return frozenset(shipped["tables"]), statements


TABLES, STATEMENTS = _read()
