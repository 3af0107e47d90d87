"""``--judge`` / ``--classifier``: ids, default and help read from the producer registry
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

        self.help = f"{self.intro} {family(self.kind).help()}."
        return super().get_help_record(ctx)


def producer_option(
    kind: str, *decls: str, intro: str, multiple: bool = False, required: bool = False
) -> Callable[[FC], FC]:
    """A ``click.option`` naming producers of ``kind``; without ``required`` it defaults to the family's first."""

    def default() -> str:
        from replay.derived import family

        return family(kind).default

    extra: dict[str, Any] = {} if required or multiple else {"default": default, "show_default": kind + " default"}
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
