"""Results derived from recorded episodes (judgments, classifications, and the next ones): the ``Producer``
base every producer subclasses, the one registry the CLI reads, the per-run stream results live in, and the
one pass that makes them. ``replay.judges`` / ``replay.judging`` and ``replay.classify`` add only what is
theirs: the verdict, the payload, how one episode is done."""

from replay.derived._command import PassOptions
from replay.derived._pass import WRITE_BATCH, DerivedPass, DerivedWriter, Outcome, Pool, Tally, call_log
from replay.derived._producer import (
    LlmEndpoint,
    LlmFactory,
    ProduceContext,
    Producer,
    ProducerConfig,
    ProducerError,
    StructuredLlm,
)
from replay.derived._registry import Family, families, family, register
from replay.derived._runner import PassKind, ProducerPass
from replay.derived._settings import DEFAULT_JUDGE_MODEL, JudgeSettings, default_location_sites
from replay.derived._stream import CacheKey, Derived, DerivedRecord, DerivedStream, latest_by_key

__all__ = [
    "DEFAULT_JUDGE_MODEL",
    "WRITE_BATCH",
    "CacheKey",
    "Derived",
    "DerivedPass",
    "DerivedRecord",
    "DerivedStream",
    "DerivedWriter",
    "Family",
    "JudgeSettings",
    "LlmEndpoint",
    "LlmFactory",
    "Outcome",
    "PassKind",
    "PassOptions",
    "Pool",
    "ProduceContext",
    "Producer",
    "ProducerConfig",
    "ProducerError",
    "ProducerPass",
    "StructuredLlm",
    "Tally",
    "call_log",
    "default_location_sites",
    "families",
    "family",
    "latest_by_key",
    "register",
]
