"""Recorded text made safe for a terminal (``safe``), with no dependency on rich: the CLI's renderers
(``p2w_cli.render.terminal``) and the console log both go through it; see docs/design/terminal-output.md."""

from p2w_runtime.terminal._safe import safe

__all__ = ["safe"]
