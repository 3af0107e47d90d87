"""``--judge`` / ``--classifier`` and the options of a producer pass: ids, default and help read from the registry
(``replay.derived.family``) when they are needed, so a new producer needs no CLI edit and ``--help`` of other
commands does not import every judge. An unknown id is the registry's one-line ``UserError`` (exit 1)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

FC = TypeVar("FC", bound=Callable[..., Any])


class ProducerOption(click.Option):
    """Its help lists every registered producer with its description, built when ``--help`` is shown."""

    def __init__(self, *args: Any, kind: str, intro: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.kind = kind
        self.intro = intro

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        from replay.derived import family

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
        from replay.derived import family

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


def pass_fields(shared: dict[str, Any]) -> dict[str, Any]:
    """``replay.derived.PassOptions`` fields from the options ``replay`` and ``classify`` share (endpoint, force,
    ``--json``, site lists), whatever command took them: one place, so the two cannot drift."""
    from p2w_cli._common import site_alias_pairs

    fields = dict(shared)
    fields["site_aliases"] = site_alias_pairs(fields.pop("site_alias"), fields.pop("site_alias_file"))
    return fields
