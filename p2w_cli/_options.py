"""The click options several commands share, declared once so that their names, defaults, env vars and help
cannot drift apart between commands: the model endpoint and its limits, the retrieval cache, an outside agent's
timeout, an offline LLM pass's options, and the dataset folder a command reads instead of the run's
(docs/design/dataset.md).

Only click, math and pathlib are imported here: every command module imports this one at start-up.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

FC = TypeVar("FC", bound=Callable[..., Any])


class FiniteFloat(click.FloatRange):
    """A float (in a range, given bounds) that is a number: ``nan`` and ``inf`` are refused, since stored JSON would
    read them back as null and ``nan`` passes every range check (``click.FloatRange`` lets it through)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.min is None and self.max is None:  # no range: help says FLOAT, with no bounds to describe
            self.name = "float"

    def _describe_range(self) -> str:
        return "" if self.min is None and self.max is None else super()._describe_range()

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


FINITE_FLOAT = FiniteFloat()

base_url_option = click.option(
    "--base-url", envvar="OPENAI_BASE_URL", help="OpenAI-compatible endpoint. Env: OPENAI_BASE_URL."
)
api_key_option = click.option("--api-key", envvar="OPENAI_API_KEY", help="Env: OPENAI_API_KEY. Never stored.")
cache_dir_option = click.option(
    "--cache-dir", type=click.Path(file_okay=False, path_type=Path), help="Retrieval index cache."
)
history_option = click.option(
    "--history",
    "history_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Memory-bank folder to retrieve from instead of the banks the run carries; refused when a bank differs "
    "from the run's (unless --other-dataset).",
)
other_dataset_option = click.option(
    "--other-dataset",
    is_flag=True,
    help="Use the --history folder although its banks differ from the run's (recorded in what this writes).",
)


llm_timeout_option = click.option(
    "--llm-timeout",
    "llm_timeout_s",
    type=FiniteFloat(0.1),
    default=120.0,
    show_default=True,
    help="Seconds per LLM call attempt, its whole answer included.",
)
max_retries_option = click.option(
    "--max-retries",
    type=click.IntRange(0),
    default=4,
    show_default=True,
    help="Retries of an LLM call on timeouts, 429 and 5xx (with backoff).",
)


def options(*stack: Callable[[FC], FC]) -> Callable[[FC], FC]:
    """One decorator applying ``stack`` in the order written (first option first in ``--help``)."""

    def decorate(f: FC) -> FC:
        for option in reversed(stack):
            f = option(f)
        return f

    return decorate


def exec_timeout_option(help_text: str) -> Callable[[FC], FC]:
    """``--timeout`` for a command that runs an outside agent (``--exec``): seconds before it is killed."""
    return click.option(
        "--timeout",
        "timeout_s",
        type=FiniteFloat(min=0, min_open=True),
        default=600.0,
        show_default=True,
        help=help_text,
    )


def llm_pass_options(who: str, results: str) -> Callable[[FC], FC]:
    """The endpoint options of an offline pass over runs (``replay``, ``classify``), kept alike because both
    end in ``replay.derived.PassOptions``; ``who`` is what the model serves, ``results`` what it makes."""
    return options(
        click.option("--model", default="gpt-5-mini", show_default=True, help=f"Model of {who}."),
        base_url_option,
        click.option("--api-key", help="API key (default: env OPENAI_API_KEY); never stored."),
        click.option("--temperature", type=FINITE_FLOAT, help=f"Sampling temperature of {who} (default: the model's)."),
        click.option(
            "--concurrency",
            default=8,
            show_default=True,
            type=click.IntRange(min=1),
            help=f"LLM {results} in flight at once.",
        ),
        llm_timeout_option,
        max_retries_option,
    )
