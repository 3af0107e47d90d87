"""``p2w-rt rerun RUN``: the run is re-executed by the integration of the agent that recorded it.

The integration is found by the agent the run names (``run.started.agent``, which is the integration's
``records_as`` or its name), not by an option: only the agent that recorded a run can re-execute it. A run whose
agent has no rerun, or is no installed integration (recorded through the recording API or ``record --exec``, or
by a plugin since uninstalled), is refused in one line naming the run and the agent; ``rerun --exec CMD``
(``p2w_runtime.exec``) re-executes an agent that runs as a command, whatever recorded it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from p2w_runtime.command_line import command_line
from p2w_runtime.integrations._agents import RerunAgent, RerunRefused, agents

if TYPE_CHECKING:
    from p2w_runtime.agent import SiteHosting
    from p2w_runtime.domain import RunInfo
    from p2w_runtime.exec import ExecReport
    from p2w_runtime.rerun import ReplayedEpisode, RerunOptions, RerunReport
    from p2w_runtime.store import EventStore


async def rerun_recorded(
    store: EventStore,
    run_ref: str,
    options: RerunOptions,
    progress: Callable[[ReplayedEpisode], None] | None = None,
    *,
    hosting: SiteHosting,
) -> RerunReport | ExecReport:
    """Re-execute ``run_ref`` by the integration that recorded it; an imported run is refused first."""
    from p2w_runtime.rerun import recorded_run  # the own agent's package: loaded only to re-execute

    run = await recorded_run(store, run_ref, "rerun", own_agent=False)
    return await rerun_of(run)(store, run_ref, options, progress, hosting=hosting)


def rerun_of(run: RunInfo) -> RerunAgent:
    """The rerun of the installed integration that recorded ``run``; ``RerunRefused`` when there is none."""
    recorder = run.started.agent
    installed = agents()
    found = next((a for a in installed.values() if (a.records_as or a.name) == recorder), None)
    again = command_line("rerun", run.label, options=("--exec", "CMD"))
    if found is None:
        raise RerunRefused(
            f"run {run.label!r} was recorded by agent {recorder!r}, which no installed agent integration records "
            f"({', '.join(installed)}): {again} re-executes it (CMD: the command that starts that agent)"
        )
    if found.rerun is None:
        raise RerunRefused(
            f"run {run.label!r} was recorded by agent {recorder!r}, whose integration (record --agent {found.name}) "
            f"has no rerun: {again} re-executes it if it runs as a command"
        )
    return found.rerun
