"""The installed namespace of p2w-rt's generic top-level names: ``p2w_rt.schemas``, ``p2w_rt.replay``, ``p2w_rt.cli``.

The repository keeps ``schemas/``, ``replay/`` and ``cli.py`` at its top level (the layout the specification names);
the entries here are links to them, so that installed, p2w-rt adds only ``p2w_rt``, ``p2w_runtime`` and ``p2w_cli``
to a user's import names and never shadows an agent project's own ``schemas.py``, ``replay.py`` or ``cli.py``
(docs/design/layers.md, "One installed namespace").
"""
