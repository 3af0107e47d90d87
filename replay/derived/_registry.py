"""The one registry of producers: each family (judges, classifiers...) registers here what its pass needs, and
each plugin (a benchmark's judges, a rubric, a classifier set) its producers, its settings model and its CLI
options. The CLI builds its choices, defaults, help and plugin options from it, so a new benchmark is one
package registering one ``Plugin``, and nothing generic names it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import import_module
from typing import Any, Generic, Literal, TypeVar

from p2w_rt.replay.derived._pass import Outcome, Tally
from p2w_rt.replay.derived._plugin_list import known, load
from p2w_rt.replay.derived._producer import Producer
from p2w_rt.replay.derived._stream import DerivedStream
from p2w_runtime.errors import UserError
from p2w_runtime.installed_plugins import ENTRY_POINT_GROUP as ENTRY_POINT_GROUP
from p2w_runtime.installed_plugins import PluginLoadError as PluginLoadError

S = TypeVar("S")
P = TypeVar("P", bound=Producer[Any, Any, Any])
O = TypeVar("O", bound=Outcome[Any])  # noqa: E741 - the family's outcome type
T = TypeVar("T", bound=Tally[Any])


class OptionError(UserError):
    """A plugin option's value is wrong; the CLI reports it as a bad value of ``option`` (exit code 2)."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(message)
        self.option = option


@dataclass(frozen=True)
class PluginOption:
    """A command-line option of a plugin, as data: the CLI makes it a ``click`` option of its family's command."""

    flag: str
    dest: str
    """The key of its value in what ``Plugin.settings`` receives (unique across plugins)."""
    help: str
    metavar: str | None = None
    multiple: bool = False
    path: Literal["file", "dir", "any"] | None = None
    """An existing path of this kind (a ``pathlib.Path``), or text."""


ProducerClass = type[Producer[Any, Any, Any]]


@dataclass(frozen=True)
class Deferred:
    """Producers a plugin names by id and imports when one of them is first needed: registering the plugin, listing
    the family's ids and parsing its options load none of their code, so a pass by another producer does not.
    ``where`` is ``module:NAME``, NAME a producer class or a sequence of them, holding exactly ``ids`` in order."""

    ids: tuple[str, ...]
    where: str

    def load(self) -> tuple[ProducerClass, ...]:
        return _imported(self)


@cache
def _imported(deferred: Deferred) -> tuple[ProducerClass, ...]:
    module, _, name = deferred.where.partition(":")
    found = getattr(import_module(module), name)
    classes: tuple[ProducerClass, ...] = tuple(found) if isinstance(found, Sequence) else (found,)
    if tuple(cls.id for cls in classes) != deferred.ids:
        held = [cls.id for cls in classes]
        raise ValueError(f"{deferred.where} holds the producers {held}, not the ids declared: {list(deferred.ids)}")
    return classes


def _ids(entry: ProducerClass | Deferred) -> tuple[str, ...]:
    return entry.ids if isinstance(entry, Deferred) else (entry.id,)


def _classes(entry: ProducerClass | Deferred) -> tuple[ProducerClass, ...]:
    return entry.load() if isinstance(entry, Deferred) else (entry,)


@dataclass(frozen=True)
class Plugin:
    """What one plugin adds to a family: producers (in ``--help`` order), a settings model and its options.

    ``settings`` builds the plugin's settings object from its options' values (by ``PluginOption.dest``);
    producers read it with ``PassSettings.of(type)``. A producer is its class, or ``Deferred``: named by id and
    imported when first needed.
    """

    name: str
    kind: str
    producers: Sequence[ProducerClass | Deferred]
    settings: Callable[[Mapping[str, Any]], object] | None = None
    options: Sequence[PluginOption] = ()
    rank: int = 50
    """Where its producers come in ``--help`` (lower first, then registration order); the first is the default."""

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(producer_id for entry in self.producers for producer_id in _ids(entry))

    def get(self, producer_id: str) -> ProducerClass | None:
        """The producer registered as ``producer_id``, importing it (and only the producers named with it) if it is
        ``Deferred``; None if this plugin has no such producer."""
        for entry in self.producers:
            if producer_id in _ids(entry):
                return next(cls for cls in _classes(entry) if cls.id == producer_id)
        return None


@dataclass(frozen=True)
class Family(Generic[S, P, O, T]):
    """The producers of one kind and what its pass needs: where results live, how outcomes, counts and aborts
    look. Producers come from the plugins of ``kind``, in the order they registered; the first is the default."""

    option: str
    unknown: type[UserError]
    stream: DerivedStream[Any, Any]
    outcome: type[O]
    summary: Callable[[str, Sequence[P]], T]
    """The counts of one pass over a run (``run_id``, its producers)."""
    noun: str
    """What the results are called in messages ("judgments")."""
    retries_failures: bool = False
    """Whether a cached failure is made again on every pass (else only with ``retry_failed``)."""

    @property
    def kind(self) -> str:
        """The producers' ``Producer.kind``, which the records of its stream name (``DerivedRecord.kind``)."""
        return self.stream.record.kind

    @property
    def plugins(self) -> list[Plugin]:
        return plugins(self.kind)

    @property
    def producers(self) -> tuple[type[P], ...]:
        """Every producer's class: the ``Deferred`` ones are imported."""
        return tuple(cls for plugin in self.plugins for e in plugin.producers for cls in _classes(e))  # type: ignore[misc]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(producer_id for plugin in self.plugins for producer_id in plugin.ids)

    @property
    def default(self) -> str:
        return self.ids[0]

    def check(self, producer_id: str) -> None:
        """The one-line error naming the known ids when no plugin registered ``producer_id``; imports no producer."""
        if producer_id not in self.ids:
            raise self.unknown(f"unknown {self.kind} {producer_id!r} ({self.option}); known: {', '.join(self.ids)}")

    def get(self, producer_id: str) -> type[P]:
        self.check(producer_id)
        return next(cls for plugin in self.plugins if (cls := plugin.get(producer_id)) is not None)  # type: ignore[return-value]

    def make(self, producer_id: str, settings: S) -> P:
        """The producer registered as ``producer_id``, configured from the user's ``settings``."""
        return self.get(producer_id)(settings)

    def help(self) -> str:
        """One ``id: description`` entry per producer, for the option's ``--help``."""
        return "; ".join(f"{cls.id}: {cls.description}" for cls in self.producers)

    def options(self) -> list[PluginOption]:
        """Every option of the family's plugins, once per ``dest`` (two plugins may share a settings model)."""
        return list({o.dest: o for plugin in self.plugins for o in plugin.options}.values())

    def settings(self, values: Mapping[str, Any]) -> tuple[object, ...]:
        """Each plugin's settings from the option values (one object per settings type); ``OptionError`` on a
        bad value."""
        made: dict[type, object] = {}
        for plugin in self.plugins:
            if plugin.settings is not None:
                given = plugin.settings(values)
                made.setdefault(type(given), given)
        return tuple(made.values())


_FAMILIES: dict[str, Family[Any, Any, Any, Any]] = {}
_PLUGINS: dict[str, Plugin] = {}


def register(family: Family[S, P, O, T]) -> Family[S, P, O, T]:
    _FAMILIES[family.kind] = family
    return family


def register_plugin(plugin: Plugin) -> Plugin:
    """Add ``plugin``'s producers to its family; an id another plugin of the family took is an error."""
    taken = {producer_id for other in _PLUGINS.values() if other.kind == plugin.kind for producer_id in other.ids}
    ids = plugin.ids
    if len(set(ids)) != len(ids) or taken & set(ids):
        raise ValueError(f"duplicate {plugin.kind} ids in plugin {plugin.name}: {sorted(taken & set(ids))}")
    _PLUGINS[plugin.name] = plugin
    return plugin


def plugins(kind: str) -> list[Plugin]:
    """The plugins of family ``kind``, by ``rank`` then registration order."""
    load(kind)
    return sorted((plugin for plugin in _PLUGINS.values() if plugin.kind == kind), key=lambda p: p.rank)


def family(kind: str) -> Family[Any, Any, Any, Any]:
    """The registered family ``kind`` ("judge", "classifier", "retrieval")."""
    load(kind)
    return _FAMILIES[kind]


def families() -> list[Family[Any, Any, Any, Any]]:
    for kind in known():
        load(kind)
    return list(_FAMILIES.values())
