"""Replay mode of the recording API: the agent is re-executed by ``p2w-rt rerun RUN --exec CMD``.

p2w-rt starts the agent with ``P2W_REPLAY`` set to its local replay endpoint (docs/design/replay.md). Then nothing
is written to the agent's store: ``open_run`` records into a store in memory (the episode grammar still checks every
event), only the task ``P2W_TASK_ID`` is to do, ``instrument`` sends model calls to the endpoint, which answers them
from the recording, ``retrieve`` returns the recorded hits, and each episode's would-be events are sent to the
endpoint when it ends, where p2w-rt compares them with the recording.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import httpx2

from p2w_rt.schemas import ForkPoint, RetrievalHit
from p2w_runtime.errors import UserError
from p2w_runtime.store import EventStore

REPLAY_ENV = "P2W_REPLAY"
"""The replay endpoint's URL; set only when p2w-rt re-executes the agent."""
TASK_ENV = "P2W_TASK_ID"
"""The task of the episode being re-executed."""
FORK_ENV = "P2W_FORK"
"""Set by ``p2w-rt fork RUN TASK --at-step K --exec CMD``: JSON of the fork (``Fork``). The episode is then
written into the agent's store as a new run (or the one the same fork left unfinished), its calls before step K
served from the recording, the later ones answered live through the endpoint."""


@dataclass(frozen=True, slots=True)
class Fork:
    """The run a forked agent writes (label, live model, ``fork_of``) and where its episode branched off; ``resume``:
    the run the same fork left unfinished under the label is continued, not a new one started."""

    label: str
    model: str
    point: ForkPoint
    resume: bool = False

    def as_env(self) -> str:
        point = self.point.model_dump(mode="json")
        return json.dumps({"label": self.label, "model": self.model, "point": point, "resume": self.resume})


def forked() -> Fork | None:
    """The fork p2w-rt asked for (``P2W_FORK``), or None."""
    said = os.environ.get(FORK_ENV)
    if not said:
        return None
    spec = json.loads(said)
    return Fork(spec["label"], spec["model"], ForkPoint.model_validate(spec["point"]), spec.get("resume", False))


class ReplayDiverged(Exception):
    """The agent asked something its recording cannot answer (another history query): it diverged, and p2w-rt
    has the first difference; the episode block ends as ``error``."""


def replay_url() -> str | None:
    """The replay endpoint when the agent runs under ``p2w-rt rerun --exec``, else None."""
    return os.environ.get(REPLAY_ENV) or None


def replayed_task() -> str:
    task = os.environ.get(TASK_ENV)
    if not task:
        raise UserError(f"{REPLAY_ENV} is set but {TASK_ENV} is not: p2w-rt sets both when it re-executes an agent")
    return task


class ReplayLink:
    """The agent's side of the endpoint: recorded retrievals asked, the episode's events handed back."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")

    async def _post(self, path: str, body: Any) -> Any:
        async with httpx2.AsyncClient(timeout=60) as http:
            answer = await http.post(f"{self.url}{path}", json=body)
        if answer.status_code == 409:
            raise ReplayDiverged(answer.json().get("error", answer.text))
        answer.raise_for_status()
        return answer.json()

    async def retrieval(self, query: str) -> tuple[list[RetrievalHit], dict[str, Any]]:
        """The recorded retrieval answering ``query`` next: its hits, and model id, index hash, k and threshold."""
        found = await self._post("/p2w/retrieve", {"query": query})
        hits = [RetrievalHit.model_validate(hit) for hit in found.pop("hits")]
        return hits, found

    async def hand_back(self, store: EventStore, stream: str) -> None:
        """Send the episode's events (from the in-memory store) to p2w-rt, which compares them with the recording."""
        events = [stored.decode().model_dump(mode="json") async for stored in store.read_stream(stream)]
        await self._post("/p2w/episode", {"events": events})
