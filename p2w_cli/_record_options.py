"""`record`'s options read: the bundled sample's folders, the curation tasks' defaults and checks, `--exec`'s command
line, which options a resume must compare, and the agents `--agent` offers."""

from __future__ import annotations

import shlex
from pathlib import Path

import click
from click.core import ParameterSource


def demo_shop() -> str:
    """Where curation tasks start by default: the demo shop whose catalog the sample profiles were written for."""
    from p2w_runtime.demo.sites.catalog import TEST_DOMAIN, base_url

    return base_url(f"threads.{TEST_DOMAIN}") + "/"


def sample_or_path(value: str, which: str) -> Path:
    """`sample` names the bundled sample personas; anything else is a folder."""
    from p2w_runtime.demo.sample import sample_history_dir, sample_tasks_dir

    if value == "sample":
        return sample_tasks_dir() if which == "tasks" else sample_history_dir()
    return Path(value)


def given_options(ctx: click.Context) -> frozenset[str]:
    """The options the user set (on the command line or by env), by flag: a resume checks them."""
    given = (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)
    return frozenset(
        p.opts[0] for p in ctx.command.params if p.name and ctx.get_parameter_source(p.name) in given and p.opts
    )


def exec_arguments(ctx: click.Context, value: str | None) -> list[str] | None:
    """``--exec``'s command line as arguments (shell quoting); it records instead of ``--agent``."""
    if value is None:
        return None
    if ctx.get_parameter_source("agent") == ParameterSource.COMMANDLINE:
        raise click.UsageError("give either --agent or --exec CMD (an outside agent run as a process)")
    try:
        command = shlex.split(value)
    except ValueError as exc:
        raise click.UsageError(f"--exec {value!r}: {exc}") from None
    if not command:
        raise click.UsageError("--exec: give the command that runs the agent")
    return command


def curation_scheme(ctx: click.Context, profiles: Path | None, scheme: str) -> str:
    """Curation tasks run without a memory bank: the profile's narrative is in the task."""
    if profiles is None:
        raise click.UsageError("--start-url is for curation tasks: give --profiles too")
    if ctx.get_parameter_source("tasks_dir") == ParameterSource.COMMANDLINE:
        raise click.UsageError("give either --tasks (Persona2Web task files) or --profiles (AgenticShop users)")
    if ctx.get_parameter_source("scheme") == ParameterSource.COMMANDLINE and scheme != "no-history":
        raise click.UsageError(
            f"--profiles records under --scheme no-history (the profile's narrative is the user context), not {scheme}"
        )
    return "no-history"


def agent_names() -> list[str]:
    from p2w_runtime.integrations import agents

    return list(agents())


def agents_help() -> str:
    """Each agent with its help line: the built-in ones and installed plugins' (``p2w_runtime.integrations``)."""
    from p2w_runtime.integrations import agents

    return " ".join(f"{a.name}: {a.help}" for a in agents().values())
