"""One plugin point's entries by name: the import formats, the agents and the metrics tables are each a
``Registry``. Built-in entries register when their module is imported; installed packages' plugins
(``p2w_runtime.installed_plugins``) are loaded on the first lookup of any registry, so a command that looks
nothing up loads none, and are listed after the built-in entries, even those a registry imports on its own first
lookup. It lives at the runtime's floor so that the importers and the recorders, which never import ``replay``,
share it with ``replay``'s metrics tables."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from p2w_runtime.errors import UserError
from p2w_runtime.installed_plugins import from_installed, load_installed


class Named(Protocol):
    """An entry: registered, listed and looked up by its ``name``."""

    @property
    def name(self) -> str: ...


T = TypeVar("T", bound=Named)


class Registry(Generic[T]):
    """The entries of one plugin point: the built-in ones, then installed plugins', each in registration order.

    ``noun`` and ``flag`` make the one-line error of an unknown name (``unknown agent 'x' (--agent); known: ...``),
    raised as ``unknown``, the caller's ``UserError`` (its exit code is the caller's); ``load``, called before the
    first lookup, registers what is not registered yet (every installed plugin, by default).
    """

    def __init__(
        self,
        noun: str,
        *,
        flag: str | None = None,
        unknown: type[UserError] = UserError,
        load: Callable[[], None] = load_installed,
    ) -> None:
        self._noun = noun
        self._flag = flag
        self._unknown = unknown
        self._load = load
        self._loaded = False
        self._built_in: dict[str, T] = {}
        self._installed: dict[str, T] = {}

    def register(self, entry: T) -> T:
        """Add ``entry``; a name already taken is an error naming it (a plugin's is then its ``PluginLoadError``)."""
        if entry.name in self._built_in or entry.name in self._installed:
            raise ValueError(f"duplicate {self._noun} {entry.name!r}")
        (self._installed if from_installed() else self._built_in)[entry.name] = entry
        return entry

    def all(self) -> dict[str, T]:
        """Every entry by name: the built-in ones, then installed plugins' (loaded on this first lookup; a plugin that
        cannot load stops every lookup)."""
        if not self._loaded:
            self._load()
            self._loaded = True
        return {**self._built_in, **self._installed}

    def get(self, name: str) -> T:
        """The entry called ``name``; ``unknown`` naming the flag and the known names otherwise."""
        known = self.all()
        if name not in known:
            flag = f" ({self._flag})" if self._flag else ""
            raise self._unknown(f"unknown {self._noun} {name!r}{flag}; known: {', '.join(known)}")
        return known[name]
