"""Terminal renderers, one module per command family (``p2w_cli.render.judging``, ``.metrics``, ...): the data
``replay`` returns, as rich tables and lines. Recorded text goes through ``p2w_cli.render.terminal``.

Nothing is imported here, so a command loads only the renderer it prints with.
"""
