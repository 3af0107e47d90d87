"""The plugins this install knows, imported by the registry (``replay.derived``) on its first lookup: each
package registers its family or its producers when imported. A new benchmark is one more name here."""

import importlib

PLUGINS = ("replay.judges", "replay.webarena", "replay.agenticshop", "replay.classify", "replay.retrieval_cf")

for _name in PLUGINS:
    importlib.import_module(_name)
