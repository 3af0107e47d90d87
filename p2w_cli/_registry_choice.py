"""Options whose choices are a runtime registry's names (``record --agent``, ``import-trajectories --format``): read
from the registry when the option is given or its help shown, so that loading the command imports neither the
registry's entries nor any installed plugin (``tests/cli/test_startup_imports.py``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem


class RegistryChoice(click.ParamType[str]):
    """One of ``names()`` (called on use); an unknown name is click's one-line usage error listing them, exit 2."""

    def __init__(self, metavar: str, names: Callable[[], Iterable[str]]) -> None:
        self.name = metavar.lower()
        self._metavar = metavar
        self._names = names

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str:
        return self._metavar

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        known = list(self._names())
        if value not in known:
            self.fail(f"{value!r} is not one of {', '.join(map(repr, known))}.", param, ctx)
        return str(value)

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        from click.shell_completion import CompletionItem

        return [CompletionItem(name) for name in self._names() if name.startswith(incomplete)]


class RegistryOption(click.Option):
    """An option whose help, ``described()``, lists the registry's entries: read only when help is shown."""

    def __init__(self, *args: Any, described: Callable[[], str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._described = described

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        self.help = self._described()
        return super().get_help_record(ctx)
