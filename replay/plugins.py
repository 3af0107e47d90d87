"""The plugins this install knows, by family: the packages the registry (``replay.derived``) imports on the
first lookup of a family, each registering its family or its producers when imported; ``package:NAME`` for a
package whose names load on first use, ``NAME`` being what registers. ``metrics``: the benchmarks' metrics tables
(``replay.derived.register_tables``), apart from their judges so that ``metrics`` loads no judge. A new benchmark
is one more name here."""

PLUGINS: dict[str, tuple[str, ...]] = {
    "judge": (
        "p2w_rt.replay.judges:JUDGES",
        "p2w_rt.replay.persona2web:PERSONA2WEB",
        "p2w_rt.replay.webarena:WEBARENA",
        "p2w_rt.replay.agenticshop:AGENTICSHOP",
    ),
    "classifier": ("p2w_rt.replay.classify:PERSONA2WEB_ERRORS",),
    "retrieval": ("p2w_rt.replay.retrieval_cf",),
    "metrics": ("p2w_rt.replay.agenticshop:TABLES",),
}
