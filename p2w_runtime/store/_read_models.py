"""Read models that installed packages keep in a store (the viewer's first pages), brought up to date by whoever
appended: a store opened with ``open_store`` that appended events brings each of them up to the log's end as it
closes, so the next reader reads a row, not the run, whether the events came from a command or from a script
(docs/design/view.md, "Kept by every writer").

A package names each under ``[project.entry-points."p2w_rt.read_models"]`` as ``MODEL = "module:function"``. The
name is the model's mark (``SummaryRows.summary_mark``), so a store where it keeps no rows loads nothing of it; the
function is awaited as ``function(store, since, end, notify)`` with the positions the writer appended between, and
decides itself what those events make stale. The store never reads what the rows hold.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import cache
from typing import TYPE_CHECKING

from p2w_runtime.installed_plugins import PluginLoadError
from p2w_runtime.store._event_store import EventStore

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

ENTRY_POINT_GROUP = "p2w_rt.read_models"

Notify = Callable[[str], None]
"""Told, in one line, of a build the writer is about to wait for (a command says it on a terminal)."""
BringForward = Callable[[EventStore, int, int, Notify | None], Awaitable[object]]


@cache
def _installed() -> tuple[EntryPoint, ...]:
    from importlib.metadata import entry_points  # only once a writer appended: a reader never scans the packages

    return tuple(sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda entry: entry.name))


async def bring_forward(store: EventStore, since: int, end: int, notify: Notify | None = None) -> None:
    """Bring every installed read model that keeps rows in ``store`` forward over the events in (``since``,
    ``end``], in the order of their names."""
    for entry in _installed():
        if not await store.summary_mark(entry.name):  # 0: no row kept here; None: this store cannot keep one
            continue
        try:
            function: BringForward = entry.load()
        except Exception as error:  # the package's own code: named in one line, not shown as a traceback
            where = f"{entry.name} = {entry.value!r} (entry point group {ENTRY_POINT_GROUP})"
            raise PluginLoadError(f"read model {where} cannot be loaded: {type(error).__name__}: {error}") from error
        await function(store, since, end, notify)
