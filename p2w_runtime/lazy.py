"""Package names loaded on first use (PEP 562): a package whose ``__init__`` re-exports many modules costs a command
only the modules whose names it uses (docs/design/startup.md)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_names(package: str, modules: Mapping[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: ``modules`` maps each exported name to its submodule (``_family``);
    the value is imported at its first use and kept in the package's ``namespace`` (its ``globals()``)."""

    def __getattr__(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    return __getattr__
