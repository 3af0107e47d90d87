"""The one registry of the runtime's plugin points (``p2w_runtime.registry``): a taken name is refused, an unknown one
is the caller's one-line error naming the flag and the known names, and what is not built in is loaded on the
first lookup, after the built-in entries. Checked on a registry of its own and on the real import formats, agents
and metrics tables (an installed package's entries: ``tests/replay/test_plugin_whole_benchmark.py``)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from p2w_rt.replay.derived import metrics_tables, register_tables
from p2w_runtime.errors import UserError
from p2w_runtime.importers import UnknownImportFormat, import_format, import_formats, register_format
from p2w_runtime.installed_plugins import installing
from p2w_runtime.integrations import UnknownAgent, agent, agents, register_agent
from p2w_runtime.registry import Registry


@dataclass(frozen=True)
class Widget:
    name: str


class UnknownWidget(UserError):
    exit_code = 2


def widgets(installed: list[str]) -> tuple[Registry[Widget], list[int]]:
    """A registry with the built-in ``a`` and ``b``, whose loader registers ``installed`` and counts its calls."""
    loads: list[int] = []

    def load() -> None:
        loads.append(1)
        with installing():  # as load_installed loads each entry point
            for name in installed:
                registry.register(Widget(name))

    registry = Registry[Widget]("widget", flag="--widget", unknown=UnknownWidget, load=load)
    registry.register(Widget("a"))
    registry.register(Widget("b"))
    return registry, loads


def test_installed_entries_load_on_the_first_lookup_after_the_built_in_ones() -> None:
    registry, loads = widgets(["plugged"])
    assert loads == []
    assert list(registry.all()) == ["a", "b", "plugged"]
    assert registry.get("plugged") == Widget("plugged")
    assert list(registry.all()) == ["a", "b", "plugged"]
    assert loads == [1], "loaded once"


def test_an_installed_entry_stays_after_a_built_in_one_registered_later() -> None:
    """The metrics tables' built-in entries load on their own first lookup, maybe after another registry's lookup
    loaded every installed plugin."""
    registry, _ = widgets([])
    with installing():
        registry.register(Widget("plugged"))
    registry.register(Widget("c"))
    assert list(registry.all()) == ["a", "b", "c", "plugged"]


def test_a_taken_name_is_refused_naming_it_and_the_first_entry_stays() -> None:
    registry, _ = widgets([])
    with pytest.raises(ValueError, match=r"^duplicate widget 'b'$"):
        registry.register(Widget("b"))
    with installing(), pytest.raises(ValueError, match=r"^duplicate widget 'a'$"):
        registry.register(Widget("a"))
    assert list(registry.all()) == ["a", "b"]


def test_an_unknown_name_is_the_callers_error_in_one_line_naming_flag_and_known_names() -> None:
    registry, _ = widgets(["plugged"])
    with pytest.raises(UnknownWidget) as raised:
        registry.get("c")
    assert str(raised.value) == "unknown widget 'c' (--widget); known: a, b, plugged"
    assert raised.value.exit_code == 2
    bare = Registry[Widget]("widget", load=lambda: None)
    with pytest.raises(UserError, match=r"^unknown widget 'c'; known: $"):
        bare.get("c")


def test_the_import_formats_agents_and_metrics_tables_are_such_registries() -> None:
    """Nothing installed in the test environment: only the built-in entries."""
    assert list(import_formats()) == ["p2w-agentoccam", "p2w-browser-use"]
    with pytest.raises(UnknownImportFormat) as raised:
        import_format("nope")
    assert str(raised.value) == "unknown trajectory format 'nope' (--format); known: p2w-agentoccam, p2w-browser-use"
    assert raised.value.exit_code == 2
    with pytest.raises(ValueError, match=r"^duplicate trajectory format 'p2w-agentoccam'$"):
        register_format(import_formats()["p2w-agentoccam"])

    assert list(agents()) == ["own", "browser-use"]
    with pytest.raises(UnknownAgent) as unknown:
        agent("nope")
    assert str(unknown.value) == "unknown agent 'nope' (--agent); known: own, browser-use"
    assert unknown.value.exit_code == 2
    with pytest.raises(ValueError, match=r"^duplicate agent 'own'$"):
        register_agent(agent("own"))

    tables = metrics_tables()
    assert list(tables) == ["agenticshop"], "the plugin list's built-in tables, loaded on this first lookup"
    with pytest.raises(ValueError, match=r"^duplicate metrics tables 'agenticshop'$"):
        register_tables(tables["agenticshop"])
