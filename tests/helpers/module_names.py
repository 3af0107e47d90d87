"""How a source file of the repository is named once installed, for the tests that read the import graph.

``schemas/``, ``replay/`` and ``cli.py`` install under the ``p2w_rt`` namespace (``p2w_rt/`` links to them), so
``replay/persona2web/_intent.py`` is the module ``p2w_rt.replay.persona2web._intent``; ``p2w_runtime`` and
``p2w_cli`` keep their own names.
"""

from __future__ import annotations

from pathlib import Path

NAMESPACED = ("schemas", "replay", "cli")
"""The repository's top-level names that install under ``p2w_rt``."""
OURS = ("p2w_rt", "p2w_runtime", "p2w_cli")
"""Every top-level name p2w-rt installs."""


def installed_name(root: Path, path: Path) -> str:
    """The dotted module name of ``path`` (a package by its own name, for its ``__init__.py``)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    if parts[0] in NAMESPACED:
        parts.insert(0, "p2w_rt")
    return ".".join(parts)
