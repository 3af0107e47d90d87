"""What the runs page and a run page poll while something records: a token that changes when they should reload."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from p2w_runtime.domain import RunInfo


@dataclass(frozen=True, slots=True)
class RunLive:
    """A run's state as its page polls it: while ``recording`` (no ``run.finished`` yet) the page reloads when
    ``token`` changes (anything appended to the store, so an episode in flight shows its steps as they come; the
    run finished) and stops polling once it finishes."""

    run_id: str
    status: str
    """``recording`` or how the run finished (``completed``, ``interrupted``, ``failed``)."""
    recording: bool
    episodes: int
    attempts: int
    token: str


def run_live(info: RunInfo, end: int | None = None) -> RunLive:
    """``end``: the log's last position the page was read at; while the run records it is part of the token, so
    the next step of an episode in flight reloads the run page (the runs page, which shows no steps, leaves it out).
    """
    status = info.finished.status if info.finished is not None else "recording"
    token = f"{info.attempts}.{info.episodes}.{status}"
    if info.finished is None and end is not None:
        token += f".{end}"
    return RunLive(info.run_id, status, info.finished is None, info.episodes, info.attempts, token)


@dataclass(frozen=True, slots=True)
class RunsLive:
    """The runs list's state as its page polls it, the run page's ``RunLive`` for every listed run: while any is
    ``recording`` the page reloads when ``token`` changes (a run started, an episode of one started or finished, a
    run finished) and stops polling once none is recording."""

    recording: list[str]
    """The ids of the runs without ``run.finished``."""
    token: str


def runs_live(infos: Sequence[RunInfo]) -> RunsLive:
    lives = [run_live(info) for info in infos]
    token = " ".join(f"{live.run_id}:{live.token}" for live in lives)
    return RunsLive([live.run_id for live in lives if live.recording], token)
