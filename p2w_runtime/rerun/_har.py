"""Restoring a fork's prefix from the source's recorded HAR (``fork --restore har``).

Every episode's final state keeps its scrubbed HAR as a blob; an episode recorded with ``record --har``
keeps the response bodies in it too, and only such a HAR can serve the pages again. With it, the prefix
actions are re-played against a context routed from the HAR (requests it lacks go to the network), so
the pages of steps < K are the recorded ones even when the site has changed or is gone; the routes are
removed once step K is reached, and the fork goes on live.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Literal

from p2w_runtime.browser import EpisodeBrowser
from p2w_runtime.errors import UserError
from p2w_runtime.rerun._recorded import RecordedEpisode
from p2w_runtime.scratch import scratch_folder
from p2w_runtime.store import EventStore

Restore = Literal["replay-actions", "har"]


def har_has_bodies(data: bytes) -> bool:
    """True when some response of the HAR carries its body (``record_har_content="embed"``)."""
    try:
        entries = json.loads(data).get("log", {}).get("entries", [])
    except (ValueError, AttributeError):
        return False
    return any("text" in ((entry.get("response") or {}).get("content") or {}) for entry in entries)


async def recorded_har(store: EventStore, source: RecordedEpisode) -> bytes | None:
    """The source episode's HAR when it can serve pages (recorded with bodies), else None."""
    if source.final is None or source.final.har is None:
        return None
    data = await store.get_blob(source.final.har)
    return data if har_has_bodies(data) else None


def choose_restore(asked: Restore | None, har: bytes | None, stream: str) -> Restore:
    """``asked``, or by what the source recorded: ``har`` when it has a HAR with bodies."""
    if asked == "har" and har is None:
        raise UserError(
            f"episode {stream} has no HAR with response bodies (record it with `record --har`); "
            "use --restore replay-actions"
        )
    return asked or ("har" if har is not None else "replay-actions")


@asynccontextmanager
async def routed_from_har(tab: EpisodeBrowser, har: bytes) -> AsyncIterator[None]:
    """Serve the tab's context's requests from ``har`` while inside; requests it lacks go to the network."""
    with scratch_folder("fork-har") as tmp:
        path = tmp / "source.har"
        path.write_bytes(har)
        await tab.context.route_from_har(path, not_found="fallback")
        try:
            yield
        finally:
            await tab.context.unroute_all(behavior="ignoreErrors")
