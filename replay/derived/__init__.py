"""Results derived from recorded episodes (judgments, classifications, and the next ones): the ``Producer``
base every producer subclasses, the one registry of families and plugins the CLI reads, the per-run stream
results live in, the one pass that makes them (``run_pass``) and the one entry every family is driven through
(``run_family``). ``replay.judges``, ``replay.classify`` and
``replay.retrieval_cf`` add only what is theirs: the verdict, the payload, how one episode is done; the
benchmarks add their producers as plugins."""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2w_runtime.lazy import lazy_names

if TYPE_CHECKING:
    from p2w_rt.replay.derived._command import PassOptions
    from p2w_rt.replay.derived._entry import FamilyReport, MakeProducers, PassWatch, RunResult, resolve_runs, run_family
    from p2w_rt.replay.derived._pass import Outcome, Tally
    from p2w_rt.replay.derived._producer import (
        LlmFactory,
        ProduceContext,
        Producer,
        ProducerConfig,
        ProducerError,
        StructuredLlm,
    )
    from p2w_rt.replay.derived._registry import (
        ENTRY_POINT_GROUP,
        Deferred,
        Family,
        OptionError,
        Plugin,
        PluginLoadError,
        PluginOption,
        families,
        family,
        register,
        register_plugin,
    )
    from p2w_rt.replay.derived._runner import PassAborted, run_pass
    from p2w_rt.replay.derived._settings import DEFAULT_MODEL, PassSettings
    from p2w_rt.replay.derived._stream import (
        CacheKey,
        DerivedRecord,
        DerivedStream,
        NarrowResult,
        current_of,
        latest_by_key,
        latest_current,
        narrow_decode,
        run_heads,
    )
    from p2w_rt.replay.derived._tables import Cell, MetricsTables, Table, TableMaker, metrics_tables, register_tables

__all__ = [
    "DEFAULT_MODEL",
    "ENTRY_POINT_GROUP",
    "CacheKey",
    "Cell",
    "DerivedRecord",
    "DerivedStream",
    "Family",
    "FamilyReport",
    "Deferred",
    "LlmFactory",
    "MakeProducers",
    "MetricsTables",
    "OptionError",
    "Outcome",
    "PassAborted",
    "PassOptions",
    "PassSettings",
    "PassWatch",
    "Plugin",
    "PluginLoadError",
    "PluginOption",
    "ProduceContext",
    "Producer",
    "ProducerConfig",
    "ProducerError",
    "RunResult",
    "StructuredLlm",
    "Table",
    "TableMaker",
    "Tally",
    "families",
    "family",
    "current_of",
    "latest_by_key",
    "latest_current",
    "narrow_decode",
    "NarrowResult",
    "metrics_tables",
    "register",
    "register_plugin",
    "register_tables",
    "resolve_runs",
    "run_heads",
    "run_family",
    "run_pass",
]

_MODULES = {
    "PassOptions": "_command",
    "FamilyReport": "_entry",
    "MakeProducers": "_entry",
    "PassWatch": "_entry",
    "RunResult": "_entry",
    "resolve_runs": "_entry",
    "run_family": "_entry",
    "Outcome": "_pass",
    "Tally": "_pass",
    "LlmFactory": "_producer",
    "ProduceContext": "_producer",
    "Producer": "_producer",
    "ProducerConfig": "_producer",
    "ProducerError": "_producer",
    "StructuredLlm": "_producer",
    "Deferred": "_registry",
    "Family": "_registry",
    "ENTRY_POINT_GROUP": "_registry",
    "OptionError": "_registry",
    "PluginLoadError": "_registry",
    "Plugin": "_registry",
    "PluginOption": "_registry",
    "families": "_registry",
    "family": "_registry",
    "register": "_registry",
    "register_plugin": "_registry",
    "PassAborted": "_runner",
    "run_pass": "_runner",
    "DEFAULT_MODEL": "_settings",
    "PassSettings": "_settings",
    "Cell": "_tables",
    "MetricsTables": "_tables",
    "Table": "_tables",
    "TableMaker": "_tables",
    "metrics_tables": "_tables",
    "register_tables": "_tables",
    "CacheKey": "_stream",
    "DerivedRecord": "_stream",
    "DerivedStream": "_stream",
    "current_of": "_stream",
    "latest_by_key": "_stream",
    "latest_current": "_stream",
    "narrow_decode": "_stream",
    "NarrowResult": "_stream",
    "run_heads": "_stream",
}
"""Where each exported name lives; they load on first use (reading a derived stream loads no pass and no registry)."""

__getattr__ = lazy_names(__name__, _MODULES, globals())
