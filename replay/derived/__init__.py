"""Cached results derived from recorded episodes (judgments, classifications): the per-run stream they live
in, reading them back keyed for the cache, and the pass that makes them. ``replay.judging`` and
``replay.classify`` add only what is theirs: the payload, its key fields, how one episode is done."""

from replay.derived._command import PassOptions, advance, pass_progress
from replay.derived._pass import (
    WRITE_BATCH,
    DerivedPass,
    DerivedWriter,
    LlmFactory,
    Outcome,
    Pool,
    Tally,
    call_log,
    pass_claim,
)
from replay.derived._stream import CacheKey, Derived, DerivedRecord, DerivedStream, latest_by_key, latest_ok

__all__ = [
    "WRITE_BATCH",
    "CacheKey",
    "Derived",
    "DerivedPass",
    "DerivedRecord",
    "DerivedStream",
    "DerivedWriter",
    "LlmFactory",
    "Outcome",
    "PassOptions",
    "Pool",
    "Tally",
    "advance",
    "call_log",
    "latest_by_key",
    "latest_ok",
    "pass_claim",
    "pass_progress",
]
