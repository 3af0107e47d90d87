"""Loading the plugins of one kind: the built-in ones ``replay/plugins.py`` names, then installed packages' ones.

Apart from the registry of producers so that ``metrics``, looking up only its tables, imports no pass, logger or
producer base on the way."""

from __future__ import annotations

import importlib

from p2w_runtime.installed_plugins import load_installed

PLUGIN_MODULES = "p2w_rt.replay.plugins"
"""The module naming the plugin packages of each kind (``PLUGINS``), read on a kind's first lookup: the CLI reads
the registry lazily, a judge pass imports no classifier, and this generic module names no benchmark. Installed
packages' plugins (``ENTRY_POINT_GROUP``, ``p2w_runtime.installed_plugins``) load after them."""

_loaded: set[str] = set()


def known() -> dict[str, tuple[str, ...]]:
    """The built-in plugin entries by kind (``judge``, ``classifier``, ``retrieval``, ``metrics``)."""
    names: dict[str, tuple[str, ...]] = importlib.import_module(PLUGIN_MODULES).PLUGINS
    return names


def load(kind: str) -> None:
    """Import the built-in plugins of ``kind`` once, then every installed package's plugins (once per process)."""
    if kind not in _loaded:
        _loaded.add(kind)
        for entry in known().get(kind, ()):
            module, _, name = entry.partition(":")
            loaded = importlib.import_module(module)
            if name:
                getattr(loaded, name)  # a lazy package's registering name
        load_installed()  # after the built-in ones: an installed plugin of any kind registers itself
