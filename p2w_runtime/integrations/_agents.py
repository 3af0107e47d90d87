"""The agents ``record --agent`` records: p2w-rt's own, Browser-Use's and any plugin's.

An agent integration is a name, a help line and ``record``: an async function given the open store, the
``RecordRequest`` (the command's options) and a progress callback, which records (or, with ``request.resume``,
continues) one run through the recording API and returns its ``RecordSummary``. What an agent does not record
(a scheme, ``--worker``, ``--profiles``) it refuses itself, with a ``UserError`` raised before any event is
written: the CLI knows no agent's options. Plugins register theirs with ``register_agent`` from an installed
package's entry point (``p2w_runtime.installed_plugins``). The built-in agents' code is imported only when they
record, so this table loads without Playwright, Browser-Use or the own agent's loop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from p2w_runtime.errors import UserError
from p2w_runtime.installed_plugins import load_installed

if TYPE_CHECKING:
    from p2w_runtime.agent import RecordRequest, RecordSummary, RunProgress, SiteHosting
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


@dataclass(frozen=True, slots=True)
class AgentIntegration:
    """One ``--agent``: its name (also what its runs are recorded as, by convention), help line and recorder."""

    name: str
    help: str
    record: RecordAgent


class UnknownAgent(UserError):
    """``agent(name)`` names no built-in or installed agent."""

    exit_code = 2


_AGENTS: dict[str, AgentIntegration] = {}


def register_agent(integration: AgentIntegration) -> AgentIntegration:
    """Add an agent; a name already taken is an error."""
    if integration.name in _AGENTS:
        raise ValueError(f"duplicate agent {integration.name!r}")
    _AGENTS[integration.name] = integration
    return integration


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


OWN = register_agent(AgentIntegration("own", "p2w-rt's personalized agent.", _record_own))
BROWSER_USE = register_agent(
    AgentIntegration(
        "browser-use",
        "Browser-Use's Agent, recorded live (the browser-use extra; schemes no-history and on-demand, no --worker).",
        _record_browser_use,
    )
)


def agents() -> dict[str, AgentIntegration]:
    """Every agent by name: the built-in ones, then installed plugins' (loaded on this first lookup)."""
    load_installed()
    return dict(_AGENTS)


def agent(name: str) -> AgentIntegration:
    """The agent called ``name``; ``UnknownAgent`` naming the known ones otherwise."""
    known = agents()
    if name not in known:
        raise UnknownAgent(f"unknown agent {name!r} (--agent); known: {', '.join(known)}")
    return known[name]
