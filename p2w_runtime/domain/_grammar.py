"""The episode's event grammar: which event may follow which, and which event may name which as its cause.

An episode stream reads::

    episode.started
    (observation | llm.call | rationale | history.query | history.retrieval | action)*
    page.capture*
    [final_state]
    episode.finished

with these rules, checked as each event is written (``EpisodeWriter``), so a bad order is the
writer's error, never something the projection has to tolerate later:

- an observation opens its step and the planner plans it before it acts: neither an observation nor a
  planner ``llm.call`` follows an action of the same step (observation -> llm.call -> action); step
  numbers are not otherwise ordered, so events without a step (an imported memory access) stand where
  they are written;
- ``history.retrieval`` is caused by a ``history.query`` of this episode that has no retrieval yet,
  with the same query text; a generator ``rationale`` (the memory answer) is caused by a
  ``history.retrieval`` of this episode; a forked ``episode.started`` is caused by its fork's source
  event; an episode re-executed as a copy of another (``rerun --record-as``) may name any event of its
  source episode; no other event names a cause;
- ``page.capture`` (a curation's product links, fetched at its end) follows the steps: only page captures,
  ``final_state`` and ``episode.finished`` follow it, and its ``index`` counts 0, 1, 2...;
- after ``final_state`` only ``episode.finished``; after ``episode.finished`` nothing;
- ``episode.started`` names the episode of its stream, and its task.

A run's own stream reads ``run.started (episode.sealed | run.finished | run.dataset_attached)*``: an
``episode.sealed`` as episodes finish (``_seal``), a ``run.finished`` when the recording ends (again after a
resume), a ``run.dataset_attached`` when an older run is given its files (``_attach``). None of these goes in an
episode stream, and no episode event goes in the run's stream.
"""

from __future__ import annotations

from typing import Literal

from p2w_rt.schemas import (
    Action,
    EpisodeStarted,
    HistoryQuery,
    HistoryRetrieval,
    LlmCall,
    NewEvent,
    Observation,
    PageCapture,
    Rationale,
)
from p2w_runtime.domain._errors import EpisodeGrammarError
from p2w_runtime.domain._streams import ATTEMPT_MARK, episode_of
from p2w_runtime.errors import clip

EPISODE_TYPES = frozenset(
    {
        "episode.started",
        "observation",
        "llm.call",
        "rationale",
        "history.query",
        "history.retrieval",
        "action",
        "page.capture",
        "final_state",
        "episode.finished",
    }
)
TAIL_TYPES = frozenset({"page.capture", "final_state", "episode.finished"})
"""The episode's tail, after its last step: ``page.capture* [final_state] episode.finished``, none with a step."""
Phase = Literal["new", "open", "capturing", "closing", "finished"]
"""Before ``episode.started``; between it and ``final_state`` (``capturing`` once a page capture was written);
after ``final_state``; after ``episode.finished``."""


class EpisodeGrammar:
    """The state of one episode stream that the rules need: its phase, the steps that acted, and open causes.

    ``opened`` continues a stream written earlier (``record --resume`` closing an unfinished attempt):
    its earlier events are not known, so only events that name no cause may follow. ``sources``: the event
    ids of the episode this stream copies, which its events may name as their causes.
    """

    def __init__(self, stream: str, *, opened: bool = False, sources: frozenset[str] = frozenset()) -> None:
        self.stream = stream
        self._sources = sources
        self.phase: Phase = "open" if opened else "new"
        self._acted_steps: set[int] = set()
        self._open_queries: dict[str, str] = {}
        """Query event id -> its text, for queries with no retrieval yet."""
        self._retrievals: set[str] = set()
        self._captures = 0

    def admit(self, event: NewEvent) -> None:
        """Check ``event`` against everything written before it, then take it into the state; raises
        ``EpisodeGrammarError`` (the state unchanged) when the grammar does not allow it here."""
        self._check(event)
        self._accept(event)

    def _refuse(self, event: NewEvent, reason: str) -> EpisodeGrammarError:
        return EpisodeGrammarError(self.stream, event.type, reason)

    def _check(self, event: NewEvent) -> None:
        p = event.payload
        if event.stream != self.stream:
            raise self._refuse(event, f"it belongs to stream {event.stream}")
        if event.type not in EPISODE_TYPES:
            raise self._refuse(event, "not an episode event (run-level and derived events have their own streams)")
        if self.phase == "new" and not isinstance(p, EpisodeStarted):
            raise self._refuse(event, "an episode starts with episode.started")
        if self.phase == "finished":
            raise self._refuse(event, "the episode has finished")
        if isinstance(p, EpisodeStarted):
            self._check_started(event, p)
        if self.phase == "closing" and event.type != "episode.finished":
            raise self._refuse(event, "only episode.finished may follow final_state")
        if self.phase == "capturing" and event.type not in TAIL_TYPES:
            raise self._refuse(event, "only page captures, final_state and episode.finished follow a page capture")
        if isinstance(p, PageCapture) and p.index != self._captures:
            raise self._refuse(event, f"page capture {p.index} where capture {self._captures} comes next")
        self._check_cause(event)
        if isinstance(p, Observation) and p.step in self._acted_steps:
            raise self._refuse(event, f"observation of step {p.step} after an action of step {p.step}")
        if isinstance(p, LlmCall) and p.role == "planner" and p.step in self._acted_steps:
            raise self._refuse(event, f"planner call of step {p.step} after an action of step {p.step}")

    def _check_started(self, event: NewEvent, p: EpisodeStarted) -> None:
        if self.phase != "new":
            raise self._refuse(event, "the episode has already started")
        if p.episode_id != episode_of(self.stream):
            raise self._refuse(event, f"episode_id {clip(p.episode_id)!r} is not the stream's episode")
        if p.episode_id.partition(ATTEMPT_MARK)[0] != p.task_id:
            raise self._refuse(event, f"episode {clip(p.episode_id)!r} is not an attempt at task {clip(p.task_id)!r}")

    def _check_cause(self, event: NewEvent) -> None:
        p, cause = event.payload, event.causation_id
        if isinstance(p, HistoryRetrieval):
            if cause not in self._open_queries:
                raise self._refuse(event, "not caused by a history.query of this episode still awaiting its retrieval")
            if self._open_queries[cause] != p.query:
                raise self._refuse(event, f"query {clip(p.query)!r} is not the query of its cause")
        elif isinstance(p, Rationale) and p.source == "generator":
            if cause not in self._retrievals:
                raise self._refuse(event, "a memory answer is caused by a history.retrieval of this episode")
        elif isinstance(p, EpisodeStarted) and p.fork is not None:
            if cause != p.fork.source_event_id:
                raise self._refuse(event, "a forked episode is caused by its fork's source event")
        elif cause is not None and cause not in self._sources:
            raise self._refuse(event, "only a retrieval and a memory answer name a cause")

    def _accept(self, event: NewEvent) -> None:
        p = event.payload
        if isinstance(p, EpisodeStarted):
            self.phase = "open"
        elif isinstance(p, PageCapture):
            self.phase, self._captures = "capturing", self._captures + 1
        elif event.type == "final_state":
            self.phase = "closing"
        elif event.type == "episode.finished":
            self.phase = "finished"
        elif isinstance(p, HistoryQuery):
            self._open_queries[event.event_id] = p.query
        elif isinstance(p, HistoryRetrieval):
            assert event.causation_id is not None
            del self._open_queries[event.causation_id]
            self._retrievals.add(event.event_id)
        elif isinstance(p, Action):
            self._acted_steps.add(p.step)
