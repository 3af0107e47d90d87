"""Results derived from recorded episodes (judgments, classifications, and the next ones): the ``Producer``
base every producer subclasses, the one registry of families and plugins the CLI reads, the per-run stream
results live in, and the one pass that makes them (``run_pass``). ``replay.judges``, ``replay.classify`` and
``replay.retrieval_cf`` add only what is theirs: the verdict, the payload, how one episode is done; the
benchmarks add their producers as plugins."""

from p2w_rt.replay.derived._command import PassOptions
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
    Family,
    OptionError,
    Plugin,
    PluginOption,
    families,
    family,
    register,
    register_plugin,
)
from p2w_rt.replay.derived._runner import run_pass
from p2w_rt.replay.derived._settings import DEFAULT_MODEL, PassSettings
from p2w_rt.replay.derived._stream import (
    CacheKey,
    DerivedRecord,
    DerivedStream,
    current_of,
    latest_by_key,
    latest_current,
    run_heads,
)

__all__ = [
    "DEFAULT_MODEL",
    "CacheKey",
    "DerivedRecord",
    "DerivedStream",
    "Family",
    "LlmFactory",
    "OptionError",
    "Outcome",
    "PassOptions",
    "PassSettings",
    "Plugin",
    "PluginOption",
    "ProduceContext",
    "Producer",
    "ProducerConfig",
    "ProducerError",
    "StructuredLlm",
    "Tally",
    "families",
    "family",
    "current_of",
    "latest_by_key",
    "latest_current",
    "register",
    "register_plugin",
    "run_heads",
    "run_pass",
]
