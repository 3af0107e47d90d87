"""Recorded text made safe for a terminal (``render``): the one place every renderer goes through; see
docs/design/terminal-output.md."""

from p2w_runtime.terminal.render import PIPE_WIDTH, cell, markup, safe, terminal_console

__all__ = ["PIPE_WIDTH", "cell", "markup", "safe", "terminal_console"]
