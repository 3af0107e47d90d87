"""Metrics tables as a plugin point: a benchmark adds the tables ``p2w-rt metrics`` prints for its judgments.

A table is plain data (a title, column names, rows of cells) so that the CLI renders every plugin's tables the same
way in each ``--format`` and a plugin needs no renderer of its own. ``metrics`` looks the providers up through the
plugin list's ``metrics`` entries (``package:NAME``), which load the tables' module and no judge.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial

from p2w_rt.replay.derived._plugin_list import load
from p2w_runtime.domain import RunInfo
from p2w_runtime.registry import Registry
from p2w_runtime.store import EventStore

Cell = str | int | float | None
"""A value of a table: text, a count, a figure (a float, shown in the metrics' number format) or missing."""


@dataclass(frozen=True, slots=True)
class Table:
    """One table: ``name`` is its key in JSON lines (``{"table": name, ...}``), ``title`` heads it elsewhere."""

    name: str
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]


TableMaker = Callable[[EventStore, Sequence[RunInfo], str | None], Awaitable[Sequence[Table]]]
"""``tables(store, runs, judge)``: the tables of the chosen runs' current judgments (``judge``: ``--judge``, or None
for every judge); none when the runs hold no judgment of its judges."""


@dataclass(frozen=True, slots=True)
class MetricsTables:
    """What a plugin adds to ``metrics``: the ids of the judges its tables read and the function making them.

    With ``--judge`` of one of ``judges`` only these tables are made (the Persona2Web Table 5 is not); with another
    judge, these are not."""

    name: str
    judges: frozenset[str]
    tables: TableMaker


TABLES = Registry[MetricsTables]("metrics tables", load=partial(load, "metrics"))
"""The built-in tables (the plugin list's ``metrics`` entries) load on the first lookup, then installed plugins'."""
register_tables = TABLES.register
"""Add a plugin's metrics tables; a second registration of one name is an error."""
metrics_tables = TABLES.all
"""Every plugin's metrics tables by name, built-in ones first, in registration order."""
