"""``--judge`` / ``--classifier`` and the options of a producer pass: ids, default and help read from the registry
(``replay.derived.family``) when they are needed, and each plugin's own options (``PluginCommand``), so a new
producer or benchmark needs no CLI edit and ``--help`` of other commands does not import every judge. An unknown
id is the registry's one-line ``UserError`` (exit 1); a bad plugin option value is click's (exit 2)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from p2w_runtime.terminal import safe

if TYPE_CHECKING:
    from p2w_rt.replay.derived import PluginOption

FC = TypeVar("FC", bound=Callable[..., Any])


class PluginCommand(click.Command):
    """A command over one producer family: the options of the family's plugins are read from the registry when
    the command parses or shows its help (``Family.options``), not when the CLI is imported."""

    def __init__(self, *args: Any, family: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.family = family
        self._made: dict[PluginOption, click.Option] = {}

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        from p2w_rt.replay.derived import family

        plugin_options = [self._made.setdefault(o, _click_option(o)) for o in family(self.family).options()]
        own = super().get_params(ctx)  # its parameters, then --help
        return [*own[: len(self.params)], *plugin_options, *own[len(self.params) :]]


def _click_option(option: PluginOption) -> click.Option:
    kind: click.ParamType[Any, Any] | None = None
    if option.path is not None:
        kind = click.Path(exists=True, file_okay=option.path != "dir", dir_okay=option.path != "file", path_type=Path)
    return click.Option(
        [option.flag, option.dest], type=kind, multiple=option.multiple, metavar=option.metavar, help=option.help
    )


class ProducerOption(click.Option):
    """Its help lists every registered producer with its description, built when ``--help`` is shown."""

    def __init__(self, *args: Any, kind: str, intro: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.kind = kind
        self.intro = intro

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        from p2w_rt.replay.derived import family

        producers = family(self.kind)
        self.help = f"{self.intro} {producers.help()}."
        if self.show_default:
            self.default = producers.default  # the callable's value, shown as it is
        return super().get_help_record(ctx)


def producer_option(
    kind: str, *decls: str, intro: str, multiple: bool = False, required: bool = False
) -> Callable[[FC], FC]:
    """A ``click.option`` naming producers of ``kind``; without ``required`` it defaults to the family's first."""

    def default() -> str:
        from p2w_rt.replay.derived import family

        return family(kind).default

    extra: dict[str, Any] = {} if required or multiple else {"default": default, "show_default": True}
    return click.option(
        *decls,
        cls=ProducerOption,
        kind=kind,
        intro=intro,
        metavar="ID",
        multiple=multiple,
        required=required,
        **extra,
    )


def pass_fields(kind: str, shared: dict[str, Any]) -> dict[str, Any]:
    """``replay.derived.PassOptions`` fields from the options ``replay`` and ``classify`` share (endpoint, force,
    ``--json``) and the plugin options of family ``kind``, whatever command took them: one place, so the two
    cannot drift. The plugins' values become their settings (``plugins``); a bad one is click's ``BadParameter``."""
    from p2w_rt.replay.derived import OptionError, family

    producers = family(kind)
    fields = dict(shared)
    values = {o.dest: fields.pop(o.dest) for o in producers.options() if o.dest in fields}
    try:
        fields["plugins"] = producers.settings(values)
    except OptionError as exc:
        raise click.BadParameter(safe(str(exc)), param_hint=exc.option) from None
    return fields
