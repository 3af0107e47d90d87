"""The commands of the p2w-rt CLI, one module per command or tight group; ``cli.main`` registers them by module name.

Each command imports its heavy dependencies inside its function, and ``cli.main`` imports a command's module only
when that command runs, so ``p2w-rt runs`` loads none of the other commands' modules.
"""

from p2w_cli._common import AppContext, MainGroup, ModelLoadNotice, StoreLocation, fail_as_one_line, wants_help

__all__ = [
    "AppContext",
    "MainGroup",
    "ModelLoadNotice",
    "StoreLocation",
    "fail_as_one_line",
    "wants_help",
]
