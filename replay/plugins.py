"""The plugins this install knows, by family: the packages the registry (``replay.derived``) imports on the
first lookup of a family, each registering its family or its producers when imported. A new benchmark is one
more name here."""

PLUGINS: dict[str, tuple[str, ...]] = {
    "judge": ("replay.judges", "replay.webarena", "replay.agenticshop"),
    "classifier": ("replay.classify",),
    "retrieval": ("replay.retrieval_cf",),
}
