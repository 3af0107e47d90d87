"""Plugins of installed packages, named under one entry point group and loaded once by whichever registry is asked
first: the judge registry (``replay.derived``), the metrics tables, the import formats (``p2w_runtime.importers``)
or the agents (``p2w_runtime.integrations``). It lives at the runtime's floor so that the importers and the
recorders, which never import ``replay``, load the same plugins; one entry point object may register a judge, a
metrics table, an import format and an agent."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache

from p2w_runtime.errors import UserError

ENTRY_POINT_GROUP = "p2w_rt.plugins"
"""Where an installed package names its plugins, as Inspect's do: ``[project.entry-points."p2w_rt.plugins"]``,
``NAME = "module:OBJECT"``. Each is loaded on the first lookup of a registry, after the built-in entries, and
registers itself when loaded, so a benchmark of another package needs no edit of p2w-rt."""


class PluginLoadError(UserError):
    """An installed package's plugin entry point cannot be loaded: named, with the error, in one line."""


_INSTALLING: ContextVar[bool] = ContextVar("installing", default=False)


@contextmanager
def installing() -> Iterator[None]:
    """While installed plugins load: what they register is theirs (``from_installed``), listed after the built-in
    entries even of a registry whose built-in entries load later (the metrics tables, on their first lookup)."""
    token = _INSTALLING.set(True)
    try:
        yield
    finally:
        _INSTALLING.reset(token)


def from_installed() -> bool:
    """Whether what is registered now comes from an installed package's plugin."""
    return _INSTALLING.get()


@cache
def load_installed() -> None:
    """Every installed package's plugins (``ENTRY_POINT_GROUP``), once per process."""
    from importlib.metadata import entry_points  # about 45 ms: only when a registry is first looked up

    for entry in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            with installing():
                entry.load()
        except Exception as error:  # the plugin's own code: whatever it raises is named, not shown as a traceback
            where = f"{entry.name} = {entry.value!r} (entry point group {ENTRY_POINT_GROUP})"
            raise PluginLoadError(f"plugin {where} cannot be loaded: {type(error).__name__}: {error}") from error
