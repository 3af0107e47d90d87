"""The agents ``record --agent`` records and ``rerun`` re-executes: p2w-rt's own, Browser-Use's and any plugin's.

An agent integration is a name, a help line and ``record``: an async function given the open store, the
``RecordRequest`` (the command's options) and a progress callback, which records (or, with ``request.resume``,
continues) one run through the recording API and returns its ``RecordSummary``. What an agent does not record
(a scheme, ``--worker``, ``--profiles``) it refuses itself, with a ``UserError`` raised before any event is
written: the CLI knows no agent's options. ``rerun``, when the agent has one, re-executes a run it recorded
against that recording (``p2w-rt rerun RUN``, dispatched by the run's recorded agent: ``integrations._rerun``);
what it does not re-execute (``--record-as``, ``--history``...) it refuses the same way. Plugins register theirs
with ``register_agent`` from an installed package's entry point (``p2w_runtime.installed_plugins``). The built-in
agents' code is imported only when they record or re-execute, so this table loads without Playwright,
Browser-Use or the own agent's loop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from p2w_runtime.errors import UserError
from p2w_runtime.registry import Registry

if TYPE_CHECKING:
    from p2w_runtime.agent import RecordRequest, RecordSummary, RunProgress, SiteHosting
    from p2w_runtime.exec import ExecReport
    from p2w_runtime.rerun import ReplayedEpisode, RerunOptions, RerunReport
    from p2w_runtime.store import EventStore


class RecordAgent(Protocol):
    """Records one run of an agent; ``hosting`` serves the sites its tasks start on (the CLI's demo sites)."""

    def __call__(
        self,
        store: EventStore,
        request: RecordRequest,
        progress: Callable[[RunProgress], None] | None,
        /,
        *,
        hosting: SiteHosting,
    ) -> Awaitable[RecordSummary]: ...


class RerunAgent(Protocol):
    """Re-executes the episodes of run ``run_ref`` (or ``options.task_ids``) against their recording, reporting
    each as ``progress``: the own agent's report (``RerunReport``), or an outside agent's (``ExecReport``, its
    ``command`` None: re-executed in this process), which ``rerun`` prints and exits 0 on only when identical."""

    def __call__(
        self,
        store: EventStore,
        run_ref: str,
        options: RerunOptions,
        progress: Callable[[ReplayedEpisode], None] | None,
        /,
        *,
        hosting: SiteHosting,
    ) -> Awaitable[RerunReport | ExecReport]: ...


@dataclass(frozen=True, slots=True)
class AgentIntegration:
    """One ``--agent``: its name, help line, recorder and, when it has one, its re-execution."""

    name: str
    help: str
    record: RecordAgent
    rerun: RerunAgent | None = None
    """How ``rerun RUN`` re-executes a run it recorded; None: it cannot (``rerun`` says so in one line)."""
    records_as: str | None = None
    """The agent its runs are recorded as (``run.started.agent``, by which ``rerun`` finds the integration of a
    run) when that is not ``name``."""


class UnknownAgent(UserError):
    """``agent(name)`` names no built-in or installed agent."""

    exit_code = 2


class RerunRefused(UserError):
    """``rerun`` cannot re-execute the run as asked: its agent has no rerun or is not installed, or its rerun
    refuses an option."""

    exit_code = 2


AGENTS = Registry[AgentIntegration]("agent", flag="--agent", unknown=UnknownAgent)
register_agent = AGENTS.register
"""Add an agent (a plugin's, from its entry point); a name already taken is an error."""
agents = AGENTS.all
"""Every agent by name: the built-in ones, then installed plugins' (loaded on this first lookup)."""
agent = AGENTS.get
"""The agent called ``name``; ``UnknownAgent`` naming the known ones otherwise."""


async def _record_own(
    store: EventStore,
    request: RecordRequest,
    progress: Callable[[RunProgress], None] | None,
    /,
    *,
    hosting: SiteHosting,
) -> RecordSummary:
    from p2w_runtime.agent import record

    return await record(store, request, progress, hosting=hosting)


async def _record_browser_use(
    store: EventStore,
    request: RecordRequest,
    progress: Callable[[RunProgress], None] | None,
    /,
    *,
    hosting: SiteHosting,
) -> RecordSummary:
    from p2w_runtime.integrations.browser_use import record_browser_use

    return await record_browser_use(store, request, progress, hosting=hosting)


async def _rerun_own(
    store: EventStore,
    run_ref: str,
    options: RerunOptions,
    progress: Callable[[ReplayedEpisode], None] | None,
    /,
    *,
    hosting: SiteHosting,
) -> RerunReport:
    from p2w_runtime.rerun import rerun

    return await rerun(store, run_ref, options, progress)


async def _rerun_browser_use(
    store: EventStore,
    run_ref: str,
    options: RerunOptions,
    progress: Callable[[ReplayedEpisode], None] | None,
    /,
    *,
    hosting: SiteHosting,
) -> ExecReport:
    if options.record_as or options.recorded_retrieval or options.history_dir:
        raise RerunRefused(
            "a Browser-Use run is re-executed against its recording as it is: no --record-as, "
            "--recorded-retrieval, --history"
        )
    from p2w_runtime.exec import rerun_browser_use

    return await rerun_browser_use(store, run_ref, options.task_ids, hosting=hosting, progress=progress)


OWN = register_agent(
    AgentIntegration(
        "own",
        "p2w-rt's personalized agent.",
        _record_own,
        _rerun_own,
        records_as="p2w-rt",  # p2w_runtime.agent.AGENT_NAME, which this table may not import (the agent's loop)
    )
)
BROWSER_USE = register_agent(
    AgentIntegration(
        "browser-use",
        "Browser-Use's Agent, recorded live (the browser-use extra; schemes no-history and on-demand, no --worker).",
        _record_browser_use,
        _rerun_browser_use,
    )
)
